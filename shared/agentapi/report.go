package agentapi

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// heartbeat keeps the build running; once it ended the answer is invalid_state and the host stops.
// A heartbeat with a task token, or of a build that has one stored (an agent's build in AWS,
// whose workflow waits with a token the agent never sees), is passed on to Step Functions
// (TaskHeartbeats) once recorded;
// that failing is logged (without the token), never the host's failure: the build's own
// heartbeat was recorded, and Step Functions' heartbeat timeout is the backstop.
func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	if err := running(b); err != nil {
		return err
	}
	var in HeartbeatRequest
	if err := decodeOptional(r, &in); err != nil {
		return err
	}
	if len(in.TaskToken) > MaxTaskToken {
		return invalid("taskToken", fmt.Sprintf("at most %d characters", MaxTaskToken))
	}
	if err := s.Lifecycle.Heartbeat(r.Context(), b.OrganizationID, b.ID, b.Host); err != nil {
		return err
	}
	token := cmp.Or(in.TaskToken, b.TaskToken)
	if token != "" && s.TaskHeartbeats != nil {
		if err := s.TaskHeartbeats.SendTaskHeartbeat(r.Context(), token); err != nil {
			s.log().WarnContext(r.Context(), "pass a host's heartbeat on to Step Functions", slog.String("build_id", b.ID),
				slog.String("org_id", b.OrganizationID), slog.String("error", strings.ReplaceAll(err.Error(), token, "[task token]")))
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// progress records the commit (or changelist) the checkout found.
func (s *Server) progress(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	if err := running(b); err != nil {
		return err
	}
	var in ProgressRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	switch {
	case len(in.Commit) > 64:
		return invalid("commit", "at most 64 characters")
	case len(in.Changelist) > 64:
		return invalid("changelist", "at most 64 characters")
	case len(in.CommitMessage) > 64<<10:
		return invalid("commitMessage", "at most 64 KiB")
	}
	if err := validCacheReport(in); err != nil {
		return err
	}
	_, err := s.Lifecycle.Progress(r.Context(), b.OrganizationID, b.ID, func(cur *kiln.Build) {
		cur.Commit, cur.CommitMessage, cur.Changelist = in.Commit, in.CommitMessage, in.Changelist
		if in.Cache != "" {
			cur.Cache, cur.CacheFrom, cur.CacheReason = kiln.CacheState(in.Cache), in.CacheFrom, in.CacheReason
		}
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// validCacheReport checks how a host says its build started: warm from a build, or cold for a
// reason.
func validCacheReport(in ProgressRequest) error {
	switch kiln.CacheState(in.Cache) {
	case kiln.CacheNone:
		if in.CacheFrom != "" || in.CacheReason != "" {
			return invalid("cache", "warm or cold, with cacheFrom or cacheReason")
		}
	case kiln.CacheWarm:
		if !kiln.ValidID(in.CacheFrom) || in.CacheReason != "" {
			return invalid("cacheFrom", "a warm build names the build whose cache it started from, and no reason")
		}
	case kiln.CacheCold:
		if in.CacheFrom != "" || in.CacheReason == "" || len(in.CacheReason) > MaxCacheReason || !utf8.ValidString(in.CacheReason) {
			return invalid("cacheReason", "a cold build says why, in at most 1024 bytes of UTF-8, and names no build")
		}
	default:
		return invalid("cache", "warm or cold")
	}
	return nil
}

// appendLogs appends a batch of lines. The log keeps at most MaxLogLines lines and a few of
// kiln's own (the truncation and end lines): a host cannot write past that.
func (s *Server) appendLogs(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	if err := running(b); err != nil {
		return err
	}
	var in LogsRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	switch {
	case in.First < 1:
		return invalid("first", "line numbers start at 1")
	case len(in.Lines) == 0 || len(in.Lines) > MaxLogBatch:
		return invalid("lines", "1 to 1000 lines per request")
	}
	if in.First+int64(len(in.Lines))-1 > int64(s.maxLogLines())+16 {
		return kiln.Errorf(kiln.EPayloadTooLarge, "the build's log is full (%d lines)", s.maxLogLines())
	}
	lines := make([]kiln.LogLine, len(in.Lines))
	for i, l := range in.Lines {
		switch kiln.LogLevel(l.Level) {
		case kiln.LevelInfo, kiln.LevelWarn, kiln.LevelError:
		default:
			return invalid("lines", "level must be info, warn or error")
		}
		if len(l.Message) > MaxLogMessage || l.Timestamp.IsZero() {
			return invalid("lines", "each line has a timestamp and at most 16 KiB of message")
		}
		lines[i] = kiln.LogLine{Time: l.Timestamp.UTC(), Level: kiln.LogLevel(l.Level), Message: l.Message}
	}
	if err := s.Logs.Append(r.Context(), b.OrganizationID, b.ID, in.First, lines...); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) maxLogLines() int {
	return cmp.Or(s.MaxLogLines, defaultMaxLogLines)
}

// defaultMaxLogLines matches the runner's default limit (KILN_LOG_MAX_LINES).
const defaultMaxLogLines = 200_000

// lastLog answers the number of the log's last line, where a host that restarts its reporting
// goes on from.
func (s *Server) lastLog(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	if err := running(b); err != nil {
		return err
	}
	last, err := s.Logs.Last(r.Context(), b.OrganizationID, b.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, LastLogLine{Last: last})
	return nil
}

// fail fails the build; the lifecycle's events end its log with why, as for every build of a
// remote host, once its host's calls are refused. A repeat with the same reason answers as the
// first; a build that ended otherwise is invalid_state.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	var in FailRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Reason == "" || len(in.Reason) > 1000 {
		return invalid("reason", "1 to 1000 characters")
	}
	failed, err := s.Lifecycle.Fail(r.Context(), b.OrganizationID, b.ID, in.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, BuildStatus{Status: string(failed.Status), FailureReason: failed.FailureReason})
	return nil
}
