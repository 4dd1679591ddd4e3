package fakekiln

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/builds"
)

// logPage answers GET /builds/:id/logs?format=json&cursor&limit&wait as the API does: the lines
// after the cursor; with wait, held until a line comes or the build ends; nextCursor null once
// the build ended and its log is whole (builds.LogComplete). Cursors here are plain seqs.
func (s *Server) logPage(w http.ResponseWriter, r *http.Request, id string) {
	q := r.URL.Query()
	from := int64(1)
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "validation_failed", "not a cursor of this list")
			return
		}
		from = n
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = 200
	}
	wait, _ := strconv.Atoi(q.Get("wait"))
	deadline := time.Now().Add(time.Duration(wait) * time.Second)
	for {
		s.mu.Lock()
		bd := s.builds[id]
		if bd == nil {
			s.mu.Unlock()
			writeError(w, http.StatusNotFound, "not_found", "build not found")
			return
		}
		b := bd.b
		var lines []buildlog.Line
		for _, l := range bd.lines {
			if l.Seq >= from && len(lines) < limit {
				lines = append(lines, l)
			}
		}
		last, total := "", int64(len(bd.lines))
		if total > 0 {
			last = bd.lines[total-1].Message
		}
		changed := s.changed
		s.mu.Unlock()
		left := time.Until(deadline)
		if len(lines) > 0 || b.Status.Terminal() || left <= 0 {
			page := api.LogPage{Items: []api.NumberedLogLine{}, BuildStatus: string(b.Status)}
			for _, l := range lines {
				page.Items = append(page.Items, api.NumberedLogLine{Seq: l.Seq, LogLine: api.LogLine{
					Timestamp: l.Time.UTC().Format(api.TimeFormat), Level: string(l.Level), Message: l.Message}})
			}
			next := from + int64(len(lines))
			if len(lines) == limit || !b.Status.Terminal() || next <= total || !builds.LogComplete(&b, last, time.Now()) {
				c := strconv.FormatInt(next, 10)
				page.NextCursor = &c
			}
			writeJSON(w, http.StatusOK, page)
			return
		}
		select {
		case <-changed:
		case <-time.After(left):
		case <-r.Context().Done():
			return
		}
	}
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, api.ErrorBody{Code: code, Message: message, RequestID: "req_fake"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
