package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/socketio"
)

// update is what a sender was told changed: lines written from first on, or the build as it is
// now. Either may be empty: the sender then reads the log and the build.
type update struct {
	first int64
	lines []kiln.LogLine
	build *kiln.Build
}

// LinesWritten sends lines just written to a build's log (first is the first one's seq) to the
// sockets in its room. The log writer calls it after the lines are stored.
func (s *Service) LinesWritten(ctx context.Context, orgID, buildID string, first int64, lines []kiln.LogLine) {
	if len(lines) == 0 {
		return
	}
	s.toRoom(ctx, Room{orgID, buildID}, update{first: first, lines: lines})
}

// BuildChanged sends a build's new status to the sockets in its room (builds.Events).
func (s *Service) BuildChanged(ctx context.Context, _ kiln.BuildStatus, b *kiln.Build) {
	s.toRoom(ctx, Room{b.OrganizationID, b.ID}, update{build: b})
}

func (s *Service) toRoom(ctx context.Context, r Room, u update) {
	members, err := s.Registry.Members(ctx, r)
	if err != nil {
		s.log().WarnContext(ctx, "live: the build's sockets", slog.String("build", r.BuildID), slog.String("error", err.Error()))
		return
	}
	var g errgroup.Group
	g.SetLimit(fanout)
	for _, id := range members {
		g.Go(func() error {
			if err := s.flush(ctx, id, r, u); err != nil {
				s.log().WarnContext(ctx, "live: send", slog.String("socket", id), slog.String("build", r.BuildID), slog.String("error", err.Error()))
			}
			return nil
		})
	}
	_ = g.Wait()
}

// flush sends a socket in a room what it has not been sent: the lines after its cursor, in
// order, then the build's status if it changed. One sender at a time does this for a socket and
// a build (the membership's lease); another that finds it held marks it dirty, and the holder
// sends again before it lets go.
func (s *Service) flush(ctx context.Context, connID string, r Room, u update) error {
	// Leases run on the real clock, whatever the service's (a test's) clock says.
	lease, ok, err := s.Registry.Acquire(ctx, connID, r, time.Now().Add(leaseTime))
	if errors.Is(err, ErrNotMember) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("live: lease: %w", err)
	}
	if !ok {
		if err := s.Registry.MarkDirty(ctx, connID, r); err != nil {
			return fmt.Errorf("live: lease: %w", err)
		}
		// The holder may have let go before the mark: then it is free now.
		if lease, ok, err = s.Registry.Acquire(ctx, connID, r, time.Now().Add(leaseTime)); err != nil || !ok {
			return ignoreNotMember(err)
		}
	}
	for {
		frames, err := s.pending(ctx, r, &lease, u)
		if err != nil {
			return err
		}
		if err := s.Sender.Send(ctx, connID, frames...); errors.Is(err, ErrGone) {
			return s.Closed(ctx, connID)
		} else if err != nil {
			return fmt.Errorf("live: send: %w", err)
		}
		lease.Until = time.Now().Add(leaseTime) // if it must send again, it keeps the lease that long
		released, err := s.Registry.Release(ctx, connID, r, lease)
		if err != nil {
			return fmt.Errorf("live: lease: %w", err)
		}
		if released {
			return nil
		}
		u = update{} // marked dirty: read what is new
	}
}

func ignoreNotMember(err error) error {
	if err == nil || errors.Is(err, ErrNotMember) {
		return nil
	}
	return fmt.Errorf("live: lease: %w", err)
}

// pending returns the frames a socket is owed past the lease's cursor, and moves the cursor.
func (s *Service) pending(ctx context.Context, r Room, lease *Lease, u update) ([]string, error) {
	var frames []string
	add := func(seq int64, l kiln.LogLine) error {
		f, err := socketio.EventFrame("build:log", logEvent(r.BuildID, seq, l))
		if err != nil {
			return err
		}
		frames = append(frames, f)
		lease.Seq = seq
		return nil
	}
	last := u.first + int64(len(u.lines)) - 1
	if len(u.lines) > 0 && u.first <= lease.Seq+1 && last > lease.Seq {
		// The lines just written follow what the socket has: no need to read them back.
		start := lease.Seq + 1
		for i, l := range u.lines[start-u.first:] {
			if err := add(start+int64(i), l); err != nil {
				return nil, err
			}
		}
	} else if len(u.lines) == 0 || u.first > lease.Seq+1 {
		for {
			lines, err := s.Logs.Read(ctx, r.OrgID, r.BuildID, lease.Seq+1, replayPage)
			if err != nil {
				return nil, fmt.Errorf("live: read the log: %w", err)
			}
			for _, l := range lines {
				if l.Seq <= lease.Seq {
					continue
				}
				if err := add(l.Seq, l.LogLine); err != nil {
					return nil, err
				}
			}
			if len(lines) < replayPage {
				break
			}
		}
	}
	if len(u.lines) > 0 {
		return frames, nil // lines only: the status is sent by the change that made it
	}
	b := u.build
	if b == nil {
		var err error
		if b, err = s.Builds.GetBuild(ctx, r.OrgID, r.BuildID); err != nil {
			return nil, fmt.Errorf("live: read the build: %w", err)
		}
	}
	if b.Status != lease.Status && !before(b.Status, lease.Status) {
		f, err := socketio.EventFrame("build:status", statusEvent(b))
		if err != nil {
			return nil, err
		}
		frames = append(frames, f)
		lease.Status = b.Status
	}
	return frames, nil
}

// before says whether status a comes before b in a build's life (a late change is not sent over
// a newer one).
func before(a, b kiln.BuildStatus) bool {
	rank := func(s kiln.BuildStatus) int {
		switch {
		case s == "":
			return 0
		case s == kiln.StatusPending:
			return 1
		case s == kiln.StatusRunning:
			return 2
		default:
			return 3
		}
	}
	return rank(a) < rank(b)
}

// timeFormat is the API's.
const timeFormat = api.TimeFormat

func logEvent(buildID string, seq int64, l kiln.LogLine) api.LiveLogLine {
	return api.LiveLogLine{BuildID: buildID, NumberedLogLine: api.NumberedLogLine{Seq: seq, LogLine: api.LogLine{
		Timestamp: l.Time.UTC().Format(timeFormat), Level: string(l.Level), Message: buildlog.Cut(l.Message)}}}
}

func statusEvent(b *kiln.Build) api.LiveBuildStatus {
	p := api.LiveBuildStatus{BuildID: b.ID, Status: string(b.Status), ProjectID: b.ProjectID, BuildSettingID: b.BuildSettingID,
		StartedAt: optionalTime(b.StartedAt), FinishedAt: optionalTime(b.FinishedAt)}
	if b.Number != 0 {
		p.Number = &b.Number
	}
	if b.FailureReason != "" {
		p.FailureReason = &b.FailureReason
	}
	return p
}

func optionalTime(t *time.Time) *string {
	if t == nil || t.IsZero() {
		return nil
	}
	s := t.UTC().Format(timeFormat)
	return &s
}
