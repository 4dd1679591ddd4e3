package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// auditRecorder keeps organizations' audit logs (the store).
type auditRecorder interface {
	RecordAudit(ctx context.Context, e *kiln.AuditEvent) error
}

// auditBodyLimit bounds the request and answer bytes kept to describe a change.
const auditBodyLimit = 64 << 10

// auditedValues are the request fields whose values an audit event may show: names, roles and
// choices, never secrets. Any other field of a request is recorded by its name alone ("set").
var auditedValues = []string{
	"name", "email", "role", "pool", "platform", "buildType", "branch", "stream", "ueVersion", "trigger",
	"schedule", "enabled", "paused", "events", "format", "uprojectPath", "repoFullName", "installationId",
	"serverUrl", "userName", "timeLimitMinutes", "autoDeploy", "depotPath", "plan", "expiresInDays",
}

// audited is authed for a change that goes into the organization's audit log: when h succeeds,
// an event of kind is recorded with the caller, their address, the id of what changed (the
// path's last wildcard, or the "id" of the created object h answered) and what the request
// changed (auditedValues by value, other fields by name). Handlers add facts with noteAudit.
// Recording happens after the change; a failure to record is logged, not answered.
func (s *Server) audited(kind string, action kiln.Action, h apiHandler) http.Handler {
	return s.authed(action, func(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
		note := &auditNote{details: map[string]string{}}
		stateOf(r.Context()).audit = note
		var body bytes.Buffer
		if r.Body != nil {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(r.Body, &limitedWriter{buf: &body, left: auditBodyLimit}), r.Body}
		}
		rec := &answerRecorder{ResponseWriter: w, status: http.StatusOK}
		if err := h(rec, r, p); err != nil {
			return err
		}
		if rec.status >= 400 || note.unchanged {
			return nil
		}
		target := note.target
		if wildcard := lastWildcard(r.Pattern); target == "" && wildcard != "" && r.Method != http.MethodPost {
			target = r.PathValue(wildcard)
		}
		if target == "" {
			target = createdID(rec.body.Bytes())
		}
		details := requestFields(body.Bytes())
		for k, v := range note.details {
			details[k] = v
		}
		e := &kiln.AuditEvent{
			ID: kiln.NewID(), OrganizationID: p.Organization.ID, At: s.now().UTC(), Kind: kind,
			ActorKind: kiln.AuditActorMember, ActorID: p.Member.User.ID, ActorName: p.Member.User.Name, ActorEmail: p.Member.User.Email,
			Address: clientAddr(r), Target: target, Details: details,
		}
		s.recordAudit(r, e)
		return nil
	})
}

// recordAudit writes an event of a change already made; a failure is logged, not answered.
func (s *Server) recordAudit(r *http.Request, e *kiln.AuditEvent) {
	if err := s.auditLog.RecordAudit(r.Context(), e); err != nil {
		loggerOf(r.Context()).ErrorContext(r.Context(), "could not record an audit event",
			slog.String("kind", e.Kind), slog.String("organization_id", e.OrganizationID), slog.Any("error", err))
	}
}

// auditNote is what a handler adds to its audit event.
type auditNote struct {
	target    string
	details   map[string]string
	unchanged bool // the request succeeded without changing anything
}

// noteAudit adds a fact to the audit event of the request (no-op outside audited routes). Never
// pass a secret.
func noteAudit(r *http.Request, key, value string) {
	if n := stateOf(r.Context()).audit; n != nil {
		n.details[key] = value
	}
}

// noteAuditUnchanged says the request changed nothing (a role set to the role held): no event.
func noteAuditUnchanged(r *http.Request) {
	if n := stateOf(r.Context()).audit; n != nil {
		n.unchanged = true
	}
}

// noteAuditTarget names what the request changed, when the path does not.
func noteAuditTarget(r *http.Request, id string) {
	if n := stateOf(r.Context()).audit; n != nil {
		n.target = id
	}
}

var wildcardRe = regexp.MustCompile(`\{([A-Za-z]+)\}`)

// lastWildcard is the name of a mux pattern's last {wildcard}: the id of what a route changes.
func lastWildcard(pattern string) string {
	m := wildcardRe.FindAllStringSubmatch(pattern, -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

// requestFields describes a JSON request body: auditedValues by value (objects flattened with
// dots, lists joined with commas), every other field as "set" (or "cleared" for null).
func requestFields(body []byte) map[string]string {
	out := map[string]string{}
	var fields map[string]any
	if json.Unmarshal(body, &fields) != nil {
		return out
	}
	describe("", fields, out)
	return out
}

func describe(prefix string, fields map[string]any, out map[string]string) {
	for k, v := range fields {
		key := prefix + k
		switch v := v.(type) {
		case nil:
			out[key] = "cleared"
		case map[string]any:
			describe(key+".", v, out)
		default:
			if slices.Contains(auditedValues, k) {
				out[key] = valueText(v)
			} else {
				out[key] = "set"
			}
		}
	}
}

func valueText(v any) string {
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = valueText(e)
		}
		return strings.Join(parts, ",")
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// createdID is the "id" of a JSON object answered by a create.
func createdID(answer []byte) string {
	var obj struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(answer, &obj) != nil {
		return ""
	}
	return obj.ID
}

// answerRecorder passes an answer through, keeping its status and its first bytes.
type answerRecorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (a *answerRecorder) WriteHeader(code int) {
	a.status = code
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerRecorder) Write(b []byte) (int, error) {
	if left := auditBodyLimit - a.body.Len(); left > 0 {
		a.body.Write(b[:min(len(b), left)])
	}
	return a.ResponseWriter.Write(b)
}

// limitedWriter keeps the first bytes written to it and drops the rest without failing.
type limitedWriter struct {
	buf  *bytes.Buffer
	left int
}

func (l *limitedWriter) Write(b []byte) (int, error) {
	if l.left > 0 {
		n := min(len(b), l.left)
		l.buf.Write(b[:n])
		l.left -= n
	}
	return len(b), nil
}
