package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Paging of GET /builds/:id/logs?format=json.
const (
	DefaultLogLimit = 200
	MaxLogLimit     = buildlog.MaxRead
	MaxLogWait      = 20 // seconds
	// MaxLogPageBytes bounds a page's items as JSON: a page stops before the line that would
	// pass it (it always has at least one line, at most 16 KiB as text) and its cursor continues
	// there. Far under Lambda's 6 MB answer, on both deployments alike.
	MaxLogPageBytes = 1 << 20
)

// logPageQuery is what a log cursor is bound to, besides the organization.
func logPageQuery(buildID string) string { return "logs:" + buildID }

// getBuildLogPage answers GET /builds/:id/logs?format=json&cursor&limit&wait: the lines after the
// cursor (from the first without one), oldest first. With wait=N (seconds, up to 20) and nothing
// new yet on a build still running, it answers as soon as a line is written or the build ends, or
// after N seconds with no items. nextCursor continues after the last line returned; it is null
// only once the build has ended and its last line has been returned (builds.LogComplete: a build
// stopped by a cancel or a supersede may still get its last lines for a moment after it ended).
func (s *Server) getBuildLogPage(w http.ResponseWriter, r *http.Request, p *auth.Principal, b *kiln.Build) error {
	orgID, id := p.Organization.ID, b.ID
	q := r.URL.Query()
	limit := DefaultLogLimit
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n <= 0 {
			return fieldError("limit", "must be a positive whole number (at most 1000)")
		}
		limit = min(n, MaxLogLimit)
	}
	wait := 0
	if v, ok := q["wait"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 0 || n > MaxLogWait {
			return fieldError("wait", "must be a whole number of seconds from 0 to 20")
		}
		wait = n
	}
	from := int64(1)
	if c := q.Get("cursor"); c != "" {
		after, err := s.cursors.decode(orgID, logPageQuery(id), c)
		if err != nil {
			return err
		}
		if from, err = strconv.ParseInt(after, 10, 64); err != nil || from < 1 {
			return fieldError("cursor", "not a cursor of this list")
		}
	}
	ctx := r.Context()
	wake, stopWatching := s.watchLog(orgID, id)
	defer stopWatching()
	deadline := time.Now().Add(time.Duration(wait) * time.Second)
	var lines []buildlog.Line
	for {
		// The status is read before the lines: a build that had ended by then had written its
		// whole log, so an ended build's short page is its last.
		status := b.Status
		var err error
		if lines, err = s.logs.Read(ctx, orgID, id, from, limit); err != nil {
			return err
		}
		left := time.Until(deadline)
		if len(lines) > 0 || status.Terminal() || left <= 0 {
			break
		}
		if !waitForLog(ctx, wake, min(left, logPoll)) {
			return nil // the client went away
		}
		if b, err = s.history.GetBuild(ctx, orgID, id); err != nil {
			return err
		}
	}
	body := api.LogPage{Items: make([]api.NumberedLogLine, 0, len(lines)), BuildStatus: string(b.Status)}
	size := 0
	for _, l := range lines {
		item := api.NumberedLogLine{Seq: l.Seq, LogLine: api.LogLine{Timestamp: timestamp(l.Time), Level: string(l.Level), Message: buildlog.Cut(l.Message)}}
		encoded, err := json.Marshal(item)
		if err != nil {
			return fmt.Errorf("log page: %w", err)
		}
		if size += len(encoded) + 1; size > MaxLogPageBytes && len(body.Items) > 0 {
			break // the cursor continues at this line
		}
		body.Items = append(body.Items, item)
	}
	full := len(body.Items) < len(lines) || len(lines) == limit
	lines = lines[:len(body.Items)]
	complete, err := s.logComplete(ctx, b, from, lines)
	if err != nil {
		return err
	}
	if !complete || full {
		body.NextCursor = s.cursors.encode(orgID, logPageQuery(id), strconv.FormatInt(from+int64(len(lines)), 10))
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeJSON(w, http.StatusOK, body)
	return nil
}

// logComplete reports whether the log of the ended build b has nothing more to come after the
// page of lines read from seq from.
func (s *Server) logComplete(ctx context.Context, b *kiln.Build, from int64, lines []buildlog.Line) (bool, error) {
	if !b.Status.Terminal() {
		return false, nil
	}
	last := ""
	switch {
	case len(lines) > 0:
		last = lines[len(lines)-1].Message
	case from > 1:
		before, err := s.logs.Read(ctx, b.OrganizationID, b.ID, from-1, 1)
		if err != nil {
			return false, err
		}
		if len(before) > 0 {
			last = before[0].Message
		}
	}
	return builds.LogComplete(b, last, s.now()), nil
}
