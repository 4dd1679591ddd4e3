package httpapi

import (
	"bufio"
	"context"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// LogReader reads build logs.
type LogReader interface {
	Read(ctx context.Context, orgID, buildID string, from int64, fn func(kiln.LogLine) error) (int64, error)
	Tail(ctx context.Context, orgID, buildID string, n int) ([]kiln.LogLine, error)
}

// followPoll is how often a followed log is checked for new lines.
const followPoll = 250 * time.Millisecond

// Limits of log followers (GET /builds/:id/logs?follow=1) at once: past them the request is 429
// rate_limited, to retry after followRetryAfter seconds.
const (
	maxFollowersPerBuild = 20
	maxFollowersPerToken = 5
	followRetryAfter     = 10
)

// getBuildLogs answers GET /builds/:id/logs: the whole log as text/plain, one message per line.
// With follow=1 the answer is streamed (chunked) and new lines are sent as they come, until the
// build ends.
func (s *Server) getBuildLogs(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return kiln.NotFound("build")
	}
	ctx := r.Context()
	b, err := s.store.GetBuild(ctx, p.Organization.ID, id)
	if err != nil {
		return err
	}
	follow := r.URL.Query().Get("follow")
	if follow != "" && follow != "0" && follow != "1" && follow != "true" && follow != "false" {
		return fieldError("follow", "must be 1 (or true) to follow, 0 (or false) not to")
	}
	following := (follow == "1" || follow == "true") && r.Method != http.MethodHead
	if following && !b.Status.Terminal() {
		release := s.followers.acquire(slot{"build:" + id, maxFollowersPerBuild}, slot{"token:" + p.Token.ID, maxFollowersPerToken})
		if release == nil {
			return busy(w, followRetryAfter, "too many log followers: at most %d per build and %d per token at once; retry after %d s",
				maxFollowersPerBuild, maxFollowersPerToken, followRetryAfter)
		}
		defer release()
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	bw := bufio.NewWriterSize(w, 32<<10)
	write := func(l kiln.LogLine) error {
		_, err := bw.WriteString(l.Message + "\n")
		return err
	}
	offset, err := s.logs.Read(ctx, p.Organization.ID, id, 0, write)
	if err != nil {
		return err
	}
	if !following {
		return bw.Flush()
	}
	flusher, _ := w.(http.Flusher)
	for !b.Status.Terminal() {
		if err := bw.Flush(); err != nil {
			return nil // the client went away
		}
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(followPoll):
		}
		if offset, err = s.logs.Read(ctx, p.Organization.ID, id, offset, write); err != nil {
			return nil
		}
		if b, err = s.store.GetBuild(ctx, p.Organization.ID, id); err != nil {
			return nil
		}
	}
	// The build ended: send what it wrote last.
	if _, err := s.logs.Read(ctx, p.Organization.ID, id, offset, write); err != nil {
		return nil
	}
	return bw.Flush()
}

// writeBuildDetail answers with a build and its most recent log lines.
func (s *Server) writeBuildDetail(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	lines, err := s.logLines(r.Context(), b.OrganizationID, b.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, buildDetailBody{buildBody: renderBuild(b), LogLines: lines})
	return nil
}

// logLines renders the most recent lines of a build for its detail.
func (s *Server) logLines(ctx context.Context, orgID, buildID string) ([]logLineBody, error) {
	lines, err := s.logs.Tail(ctx, orgID, buildID, kiln.MaxDetailLogLines)
	if err != nil {
		return nil, err
	}
	out := make([]logLineBody, 0, len(lines))
	for _, l := range lines {
		out = append(out, logLineBody{Timestamp: timestamp(l.Time), Level: string(l.Level), Message: l.Message})
	}
	return out, nil
}

// cancelBuild answers POST /builds/:id/cancel: a pending or running build becomes failed
// (cancelled) and its engine is stopped; an ended build is 409 invalid_state.
func (s *Server) cancelBuild(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return kiln.NotFound("build")
	}
	if err := decodeBody(w, r, &struct{}{}, true); err != nil {
		return err
	}
	b, err := s.builds.Cancel(r.Context(), p.Organization.ID, id)
	if err != nil {
		return err
	}
	return s.writeBuildDetail(w, r, b)
}
