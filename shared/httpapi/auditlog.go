package httpapi

import (
	"context"
	"net/http"
	"regexp"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// auditLogReader reads organizations' audit logs.
type auditLogReader interface {
	ListAudit(ctx context.Context, orgID string, f kiln.AuditFilter, p store.Page) ([]*kiln.AuditEvent, string, error)
}

// auditEventBody is an audit event as the API shows it.
type auditEventBody struct {
	ID      string            `json:"id"`
	At      string            `json:"at"`
	Kind    string            `json:"kind"`
	Actor   auditActorBody    `json:"actor"`
	Address string            `json:"address"`
	Target  string            `json:"target"`
	Details map[string]string `json:"details"`
}

type auditActorBody struct {
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

func renderAuditEvent(e *kiln.AuditEvent) auditEventBody {
	details := e.Details
	if details == nil {
		details = map[string]string{}
	}
	return auditEventBody{ID: e.ID, At: timestamp(e.At), Kind: e.Kind,
		Actor:   auditActorBody{Kind: e.ActorKind, ID: e.ActorID, Name: e.ActorName, Email: e.ActorEmail},
		Address: e.Address, Target: e.Target, Details: details}
}

var auditKindRe = regexp.MustCompile(`^[a-z_]+(\.[a-z_]+)?$`)

// listAuditLog answers GET /organizations/:id/audit-log (owners and admins): the organization's
// changes, newest first, paged, filtered by actor (a user id) and kind (one kind, such as
// member.removed, or a category, such as member).
func (s *Server) listAuditLog(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if _, err := ownOrganization(r, p); err != nil {
		return err
	}
	q := r.URL.Query()
	f := kiln.AuditFilter{ActorID: q.Get("actor"), Kind: q.Get("kind")}
	if f.ActorID != "" && !kiln.ValidID(f.ActorID) {
		return fieldError("actor", "must be a user id")
	}
	if f.Kind != "" && !auditKindRe.MatchString(f.Kind) {
		return fieldError("kind", "must be an event kind such as member.removed, or a category such as member")
	}
	return writePage(s, w, r, p.Organization.ID, "audit-log?actor="+f.ActorID+"&kind="+f.Kind,
		func(ctx context.Context, page store.Page) ([]*kiln.AuditEvent, string, error) {
			return s.auditLogs.ListAudit(ctx, p.Organization.ID, f, page)
		}, renderAuditEvent)
}
