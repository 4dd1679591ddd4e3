package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// The scans across organizations (QueuedBuilds, ScheduledBuildSettings, ArtifactsCreatedBefore)
// see the items of every subtest when the store is shared. So their tests date their builds and
// artifacts long before any test ran: those head the oldest-first scans, and what other subtests
// made (dated now) comes after them. When a test ends, it takes its items out of the scans again
// (failing its queued builds and the deliveries still awaited, deleting its artifacts), so that a
// shared store stays usable.

// past makes records (builds, deliveries) dated one millisecond apart from a base time on, their
// ids in that order, and settles those still in flight when the test ends.
type past[T any] struct {
	t    *testing.T
	s    store.Store
	ids  kiln.IDGenerator
	at   time.Time
	made []T
}

// newPast starts at base; settle is called, after the test, on every record made.
func newPast[T any](t *testing.T, s store.Store, base time.Time, settle func(ctx context.Context, v T)) *past[T] {
	p := &past[T]{t: t, s: s, at: base}
	t.Cleanup(func() {
		ctx := context.Background() // t.Context() is done by now
		for _, v := range p.made {
			settle(ctx, v)
		}
	})
	return p
}

// tick moves one millisecond on and returns an id and time of that millisecond.
func (p *past[T]) tick() (string, time.Time) {
	p.at = p.at.Add(time.Millisecond)
	return p.ids.New(p.at), p.at
}

// pastBuilds makes builds whose ids (which order the queue) are of consecutive milliseconds from
// base on, and fails them when the test ends if they are still queued (or, complete, their
// delivery if it is still awaited).
type pastBuilds struct{ *past[*kiln.Build] }

func newPastBuilds(t *testing.T, s store.Store, base time.Time) pastBuilds {
	return pastBuilds{newPast(t, s, base, func(ctx context.Context, b *kiln.Build) {
		got, err := s.GetBuild(ctx, b.OrganizationID, b.ID)
		if err != nil {
			return
		}
		if awaitingDelivery(got) {
			got.AutoDeployStatus, got.AutoDeployError = kiln.AutoDeployFailed, "test ended"
			_ = s.UpdateBuild(ctx, got, got.Status, kiln.AllBuildFields)
			return
		}
		if got.Status.Terminal() {
			return
		}
		from := got.Status
		if got.Transition(kiln.StatusFailed, time.Now(), "test ended") == nil {
			_ = s.UpdateBuild(ctx, got, from, kiln.AllBuildFields)
		}
	})}
}

// next makes (without storing) a build of set in status, dated one millisecond after the
// previous one.
func (p pastBuilds) next(set *kiln.BuildSetting, status kiln.BuildStatus) *kiln.Build {
	b := newBuild(set, status)
	b.ID, b.CreatedAt = p.tick()
	if status == kiln.StatusRunning {
		b.StartedAt, b.HeartbeatAt = ptr(b.CreatedAt.Add(time.Second)), ptr(b.CreatedAt.Add(2*time.Second))
	}
	p.made = append(p.made, b)
	return b
}

// create stores the next build of set in status.
func (p pastBuilds) create(set *kiln.BuildSetting, status kiln.BuildStatus) *kiln.Build {
	p.t.Helper()
	b := p.next(set, status)
	wantOK(p.t, p.s.CreateBuild(p.t.Context(), b), "CreateBuild")
	return b
}

// queue returns QueuedBuilds(status, limit), checking that every build is in status and that
// they come oldest (smallest id) first.
func queue(t *testing.T, s store.Store, status kiln.BuildStatus, limit int) []*kiln.Build {
	t.Helper()
	bs, err := s.QueuedBuilds(t.Context(), status, limit)
	wantOK(t, err, "QueuedBuilds")
	if len(bs) > limit {
		t.Fatalf("QueuedBuilds(%s, %d): %d builds", status, limit, len(bs))
	}
	for i, b := range bs {
		if b.Status != status {
			t.Fatalf("QueuedBuilds(%s): build %s is %s", status, b.ID, b.Status)
		}
		if i > 0 && bs[i-1].ID >= b.ID {
			t.Fatalf("QueuedBuilds(%s): %s before %s, want oldest first", status, bs[i-1].ID, b.ID)
		}
	}
	return bs
}

// queuePages reads the first n builds of the queue of status with QueuedBuildsAfter, limit at a
// time, each page starting after the last build of the one before.
func queuePages(t *testing.T, s store.Store, status kiln.BuildStatus, limit, n int) []*kiln.Build {
	t.Helper()
	var got []*kiln.Build
	after := ""
	for len(got) < n {
		page, err := s.QueuedBuildsAfter(t.Context(), status, after, limit)
		wantOK(t, err, "QueuedBuildsAfter")
		if len(page) == 0 || len(page) > limit {
			t.Fatalf("QueuedBuildsAfter(%s, %q, %d): %d builds", status, after, limit, len(page))
		}
		for _, b := range page {
			if b.Status != status || b.ID <= after {
				t.Fatalf("QueuedBuildsAfter(%s, %q): build %s is %s", status, after, b.ID, b.Status)
			}
			after = b.ID
		}
		got = append(got, page...)
	}
	return got[:n]
}

// wantQueueHead fails the test unless the queue of status starts with want (whole builds).
func wantQueueHead(t *testing.T, s store.Store, status kiln.BuildStatus, want ...*kiln.Build) {
	t.Helper()
	got := queue(t, s, status, store.MaxLimit)
	if len(got) < len(want) {
		t.Fatalf("%s queue: %d builds, want at least %d: %v", status, len(got), len(want), idsOfBuilds(got))
	}
	wantEqual(t, fmt.Sprintf("head of the %s queue", status), got[:len(want)], want)
}

// wantNotQueued fails the test if b is in the queue of status.
func wantNotQueued(t *testing.T, s store.Store, status kiln.BuildStatus, b *kiln.Build) {
	t.Helper()
	for _, q := range queue(t, s, status, store.MaxLimit) {
		if q.ID == b.ID {
			t.Fatalf("build %s (%s) is still in the %s queue", b.ID, b.Status, status)
		}
	}
}

func idsOfBuilds(bs []*kiln.Build) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.ID
	}
	return out
}

func testQueuedBuilds(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("OldestFirstAcrossOrganizations", func(t *testing.T) {
		s := open(t)
		sets := settingsOfOrganizations(t, s, 3)
		// Builds of three organizations in all statuses, stored out of order: the scan sorts
		// them, not the order of writes.
		past := newPastBuilds(t, s, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
		statuses := []kiln.BuildStatus{kiln.StatusPending, kiln.StatusRunning, kiln.StatusPending,
			kiln.StatusComplete, kiln.StatusRunning, kiln.StatusFailed, kiln.StatusSuperseded}
		made := make([]*kiln.Build, 14)
		for i := range made {
			made[i] = past.next(sets[i%3], statuses[i%7])
		}
		for _, i := range []int{7, 0, 11, 4, 9, 2, 13, 5, 10, 1, 12, 8, 3, 6} {
			wantOK(t, s.CreateBuild(t.Context(), made[i]), "CreateBuild")
		}
		var pending, running []*kiln.Build
		for _, b := range made {
			switch b.Status {
			case kiln.StatusPending:
				pending = append(pending, b)
			case kiln.StatusRunning:
				running = append(running, b)
			}
		}
		wantQueueHead(t, s, kiln.StatusPending, pending...)
		wantQueueHead(t, s, kiln.StatusRunning, running...)
		for _, limit := range []int{1, 3} {
			wantEqual(t, fmt.Sprintf("QueuedBuilds(pending, %d)", limit), queue(t, s, kiln.StatusPending, limit), pending[:limit])
			wantEqual(t, fmt.Sprintf("QueuedBuilds(running, %d)", limit), queue(t, s, kiln.StatusRunning, limit), running[:limit])
		}
		// Page by page, QueuedBuildsAfter reads the same queue.
		for _, limit := range []int{1, 2} {
			wantEqual(t, fmt.Sprintf("pending queue in pages of %d", limit), queuePages(t, s, kiln.StatusPending, limit, len(pending)), pending)
			wantEqual(t, fmt.Sprintf("running queue in pages of %d", limit), queuePages(t, s, kiln.StatusRunning, limit, len(running)), running)
		}
	})

	t.Run("BuildsLeaveTheQueueWithTheirStatus", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		_, set := createOrganizationSetting(t, s)
		past := newPastBuilds(t, s, time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC))
		a, b, c := past.create(set, kiln.StatusPending), past.create(set, kiln.StatusPending), past.create(set, kiln.StatusPending)
		wantQueueHead(t, s, kiln.StatusPending, a, b, c)

		wantOK(t, a.Transition(kiln.StatusRunning, now(), ""), "Transition")
		a.HeartbeatAt = ptr(now())
		wantOK(t, s.UpdateBuild(ctx, a, kiln.StatusPending, kiln.AllBuildFields), "UpdateBuild pending→running")
		wantQueueHead(t, s, kiln.StatusPending, b, c)
		wantQueueHead(t, s, kiln.StatusRunning, a)

		a.HeartbeatAt = ptr(now().Add(time.Second))
		wantOK(t, s.UpdateBuild(ctx, a, kiln.StatusRunning, kiln.AllBuildFields), "UpdateBuild running→running (heartbeat)")
		wantQueueHead(t, s, kiln.StatusRunning, a)

		wantOK(t, a.Transition(kiln.StatusComplete, now(), ""), "Transition")
		wantOK(t, s.UpdateBuild(ctx, a, kiln.StatusRunning, kiln.AllBuildFields), "UpdateBuild running→complete")
		wantNotQueued(t, s, kiln.StatusRunning, a)
		wantNotQueued(t, s, kiln.StatusPending, a)

		wantOK(t, b.Transition(kiln.StatusSuperseded, now(), ""), "Transition")
		wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusPending, kiln.AllBuildFields), "UpdateBuild pending→superseded")
		wantOK(t, c.Transition(kiln.StatusFailed, now(), "cancelled"), "Transition")
		wantOK(t, s.UpdateBuild(ctx, c, kiln.StatusPending, kiln.AllBuildFields), "UpdateBuild pending→failed")
		for _, gone := range []*kiln.Build{b, c} {
			wantNotQueued(t, s, kiln.StatusPending, gone)
			wantNotQueued(t, s, kiln.StatusRunning, gone)
		}

		// A refused update moves nothing.
		d := past.create(set, kiln.StatusPending)
		stale := *d
		wantOK(t, stale.Transition(kiln.StatusRunning, now(), ""), "Transition")
		wantCode(t, s.UpdateBuild(ctx, &stale, kiln.StatusRunning, kiln.AllBuildFields), kiln.EInvalidState, "UpdateBuild from a wrong status")
		wantQueueHead(t, s, kiln.StatusPending, d)
		wantNotQueued(t, s, kiln.StatusRunning, d)
	})

	t.Run("OtherStatusesAreBadRequest", func(t *testing.T) {
		s := open(t)
		for _, status := range []kiln.BuildStatus{kiln.StatusComplete, kiln.StatusFailed, kiln.StatusSuperseded, "", "queued"} {
			_, err := s.QueuedBuilds(t.Context(), status, 10)
			wantCode(t, err, kiln.EBadRequest, fmt.Sprintf("QueuedBuilds(%q)", status))
		}
	})
}
