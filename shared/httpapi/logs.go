package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// LogReader reads build logs: lines numbered 1, 2, 3, ... per build.
type LogReader interface {
	// Read returns up to max lines from sequence number from on, in order and without gaps.
	Read(ctx context.Context, orgID, buildID string, from int64, max int) ([]buildlog.Line, error)
	// Last is the number of the last line written, 0 for none.
	Last(ctx context.Context, orgID, buildID string) (int64, error)
}

// logWatcher is a log store that wakes readers when a build's log grows (the one-machine
// store does; others are polled).
type logWatcher interface {
	Watch(orgID, buildID string) (<-chan struct{}, func())
}

// logPoll is how often a waiting reader looks at the build (has it ended?) and, for a store that
// cannot wake it, at the log.
const logPoll = time.Second

// Limits of log followers (GET /builds/:id/logs?follow=1) at once: past them the request is 429
// rate_limited, to retry after followRetryAfter seconds.
const (
	maxFollowersPerBuild = 20
	maxFollowersPerToken = 5
	followRetryAfter     = 10
)

// getBuildLogs answers GET /builds/:id/logs: the whole log as text/plain, one message per line,
// or with format=json one page of numbered lines (logs_page.go). With follow=1 the text is
// streamed (chunked) and new lines are sent as they come, until the build ends.
func (s *Server) getBuildLogs(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return kiln.NotFound("build")
	}
	ctx := r.Context()
	b, err := s.history.GetBuild(ctx, p.Organization.ID, id)
	if err != nil {
		return err
	}
	follow := r.URL.Query().Get("follow")
	if follow != "" && follow != "0" && follow != "1" && follow != "true" && follow != "false" {
		return fieldError("follow", "must be 1 (or true) to follow, 0 (or false) not to")
	}
	following := (follow == "1" || follow == "true") && r.Method != http.MethodHead
	switch r.URL.Query().Get("format") {
	case "", "text":
	case "json":
		if following {
			return fieldError("follow", "cannot be used with format=json; page with cursor and wait instead")
		}
		return s.getBuildLogPage(w, r, p, b)
	default:
		return fieldError("format", "must be text (the default) or json")
	}
	if following && s.buffered {
		return kiln.Errorf(eLogPagingRequired, "this deployment cannot stream a log (follow=1): its API answers through API Gateway, which holds whole answers; "+
			"page the log with format=json, passing each page's nextCursor as cursor and wait=%d to wait for new lines", MaxLogWait)
	}
	if following && !b.Status.Terminal() {
		release := s.followers.acquire(slot{"build:" + id, maxFollowersPerBuild}, slot{p.CredentialKey(), maxFollowersPerToken})
		if release == nil {
			return busy(w, followRetryAfter, "too many log followers: at most %d per build and %d per token at once; retry after %d s",
				maxFollowersPerBuild, maxFollowersPerToken, followRetryAfter)
		}
		defer release()
	}
	wake, stopWatching := s.watchLog(p.Organization.ID, id)
	defer stopWatching()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	var bw textWriter = bufio.NewWriterSize(w, 32<<10)
	var capped *cappedText
	if s.buffered {
		capped = &cappedText{max: MaxBufferedTextLog}
		bw = capped
	}
	next := int64(1)
	// writeNew writes the lines from next on; it returns false when the log could not be read.
	writeNew := func() (bool, error) {
		for {
			lines, err := s.logs.Read(ctx, p.Organization.ID, id, next, buildlog.MaxRead)
			if err != nil {
				return false, err
			}
			for _, l := range lines {
				if _, err := bw.WriteString(buildlog.Cut(l.Message) + "\n"); err != nil {
					return false, nil // the client went away
				}
				next = l.Seq + 1
			}
			if len(lines) < buildlog.MaxRead {
				return true, nil
			}
		}
	}
	if _, err := writeNew(); err != nil {
		return err // nothing is sent yet: the error envelope goes out
	}
	if capped != nil {
		if capped.over {
			return kiln.Errorf(eLogPagingRequired, "this build's log is larger than this deployment answers as text (%d MiB, API Gateway's limit); "+
				"page it with format=json, passing each page's nextCursor as cursor", MaxBufferedTextLog>>20)
		}
		_, err := w.Write(capped.buf.Bytes())
		return err
	}
	if !following {
		return bw.Flush()
	}
	flusher, _ := w.(http.Flusher)
	for ended := b.Status.Terminal(); !ended; {
		if err := bw.Flush(); err != nil {
			return nil // the client went away
		}
		if flusher != nil {
			flusher.Flush()
		}
		if !waitForLog(ctx, wake, logPoll) {
			return nil
		}
		// Look at the status first: a build that has ended has written its whole log.
		if b, err = s.history.GetBuild(ctx, p.Organization.ID, id); err != nil {
			return nil
		}
		ended = b.Status.Terminal()
		if ok, _ := writeNew(); !ok {
			return nil
		}
	}
	return bw.Flush()
}

// MaxBufferedTextLog is the largest whole log answered as text where answers are buffered
// (Config.BufferedAnswers): Lambda answers at most 6 MB, and its answer carries the text as a
// JSON string, in which a control character (an ANSI colour code) takes six bytes.
const MaxBufferedTextLog = 1 << 20

// textWriter is where a text log is written: a buffered writer on the answer, or cappedText.
type textWriter interface {
	WriteString(s string) (int, error)
	Flush() error
}

// cappedText holds a text log up to max bytes; past them it keeps nothing more and says so.
type cappedText struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *cappedText) WriteString(s string) (int, error) {
	if c.over || c.buf.Len()+len(s) > c.max {
		c.over = true
		return 0, errTextLogTooLarge
	}
	return c.buf.WriteString(s)
}

func (c *cappedText) Flush() error { return nil }

// errTextLogTooLarge stops reading a log that cappedText cannot hold.
var errTextLogTooLarge = errors.New("the log is too large to answer as text")

// watchLog returns the wake channel of a build's log (nil when the store cannot wake readers)
// and the function that stops watching.
func (s *Server) watchLog(orgID, buildID string) (<-chan struct{}, func()) {
	if lw, ok := s.logs.(logWatcher); ok {
		return lw.Watch(orgID, buildID)
	}
	return nil, func() {}
}

// waitForLog waits until the log wakes the reader or up to d, and reports false when ctx ended.
func waitForLog(ctx context.Context, wake <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-t.C:
	}
	return true
}

// writeBuildDetail answers with a build and its most recent log lines.
func (s *Server) writeBuildDetail(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	lines, err := s.logLines(r.Context(), b.OrganizationID, b.ID)
	if err != nil {
		return err
	}
	body := api.BuildDetail{Build: renderBuild(b), LogLines: lines}
	if err := s.nameTriggers(r.Context(), b.OrganizationID, &body.Build); err != nil {
		return err
	}
	if err := s.addProgress(r.Context(), b.OrganizationID, []*kiln.Build{b}, []*api.Build{&body.Build}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// logLines renders the most recent lines of a build for its detail: at most
// kiln.MaxDetailLogLines, each at most buildlog.MaxLineBytes.
func (s *Server) logLines(ctx context.Context, orgID, buildID string) ([]api.LogLine, error) {
	last, err := s.logs.Last(ctx, orgID, buildID)
	if err != nil {
		return nil, err
	}
	out := make([]api.LogLine, 0, min(last, kiln.MaxDetailLogLines))
	if last == 0 {
		return out, nil
	}
	lines, err := s.logs.Read(ctx, orgID, buildID, max(1, last-kiln.MaxDetailLogLines+1), kiln.MaxDetailLogLines)
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		out = append(out, api.LogLine{Timestamp: timestamp(l.Time), Level: string(l.Level), Message: buildlog.Cut(l.Message)})
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
