package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// farFuture is a "now" at which every queued delivery is due.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// dueBefore reports whether a queue entry due at at with id id comes before one due at bt with
// id bid: earliest due first, then by id.
func dueBefore(at time.Time, id string, bt time.Time, bid string) bool {
	if !at.Equal(bt) {
		return at.Before(bt)
	}
	return id < bid
}

// due is what a Due*Deliveries answer is ordered by, and why an item should not be in it ("" when
// it should).
type due struct {
	at    time.Time
	id    string
	fault string
}

// wantDue fails the test unless items, what answered limit, are no more than the limit (read as
// store.MaxLimit outside 1..MaxLimit), all belong (no fault) and come earliest due (then smallest
// id) first.
func wantDue[T any](t *testing.T, what string, limit int, items []T, of func(T) due) {
	t.Helper()
	n := limit
	if n < 1 || n > store.MaxLimit {
		n = store.MaxLimit
	}
	if len(items) > n {
		t.Fatalf("%s(%d): %d answered", what, limit, len(items))
	}
	for i, v := range items {
		d := of(v)
		if d.fault != "" {
			t.Fatalf("%s: %s", what, d.fault)
		}
		if prev := of(items[max(i-1, 0)]); i > 0 && !dueBefore(prev.at, prev.id, d.at, d.id) {
			t.Fatalf("%s: %s before %s, want earliest due first", what, prev.id, d.id)
		}
	}
}

// wantHead fails the test unless got starts with want (whole records).
func wantHead[T any](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) < len(want) {
		t.Fatalf("%s: %d, want at least %d", what, len(got), len(want))
	}
	wantEqual(t, fmt.Sprintf("head of the %s", what), got[:len(want)], want)
}

// awaitingDelivery reports whether DueBuildDeliveries (at a time after its next attempt) must list b.
func awaitingDelivery(b *kiln.Build) bool {
	return b.Status == kiln.StatusComplete &&
		(b.AutoDeployStatus == kiln.AutoDeployPending || b.AutoDeployStatus == kiln.AutoDeployDelivering)
}

// deliveries returns DueBuildDeliveries(farFuture, MaxLimit, limit): every queued auto deploy,
// checking that every build awaits delivery, that they come earliest due (then smallest id) first
// and that there are no more than the limit (read as store.MaxLimit outside 1..MaxLimit).
func deliveries(t *testing.T, s store.Store, limit int) []*kiln.Build {
	t.Helper()
	bs, err := s.DueBuildDeliveries(t.Context(), farFuture, store.MaxLimit, limit)
	wantOK(t, err, "DueBuildDeliveries")
	wantDue(t, "DueBuildDeliveries", limit, bs, func(b *kiln.Build) due {
		v := due{at: b.AutoDeployNextAt, id: b.ID}
		if !awaitingDelivery(b) {
			v.fault = fmt.Sprintf("build %s is %s with autoDeployStatus %q", b.ID, b.Status, b.AutoDeployStatus)
		}
		return v
	})
	return bs
}

// wantDeliveryHead fails the test unless the builds awaiting delivery start with want (whole
// builds).
func wantDeliveryHead(t *testing.T, s store.Store, want ...*kiln.Build) {
	t.Helper()
	wantHead(t, "builds awaiting delivery", deliveries(t, s, store.MaxLimit), want)
}

// wantNotAwaiting fails the test if b is listed as awaiting delivery.
func wantNotAwaiting(t *testing.T, s store.Store, b *kiln.Build) {
	t.Helper()
	for _, d := range deliveries(t, s, store.MaxLimit) {
		if d.ID == b.ID {
			t.Fatalf("build %s (%s, autoDeployStatus %q) is listed as awaiting delivery", b.ID, b.Status, b.AutoDeployStatus)
		}
	}
}

func testBuildsAwaitingDelivery(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("OldestFirstAcrossOrganizations", func(t *testing.T) {
		s := open(t)
		sets := settingsOfOrganizations(t, s, 3)
		// Builds of three organizations in every combination of status and autoDeployStatus,
		// stored out of order: the scan sorts them, not the order of writes. Only the complete
		// ones whose delivery is pending or delivering await delivery; builds without auto deploy
		// (autoDeployStatus "") never do.
		past := newPastBuilds(t, s, time.Date(2004, 1, 1, 0, 0, 0, 0, time.UTC))
		deploy := []kiln.AutoDeployStatus{kiln.AutoDeployNone, kiln.AutoDeployPending, kiln.AutoDeployDelivering,
			kiln.AutoDeploySucceeded, kiln.AutoDeployFailed}
		var made, want []*kiln.Build
		for i := range 2 * len(kiln.BuildStatuses) * len(deploy) {
			status := kiln.BuildStatuses[i%len(kiln.BuildStatuses)]
			b := past.next(sets[i%3], status)
			b.AutoDeployStatus = deploy[(i/len(kiln.BuildStatuses))%len(deploy)]
			b.AutoDeployAttempts = i % 3
			if b.AutoDeployStatus == kiln.AutoDeployFailed {
				b.AutoDeployError = "HTTP 502"
			}
			if status.Terminal() {
				b.StartedAt, b.FinishedAt = ptr(b.CreatedAt.Add(time.Second)), ptr(b.CreatedAt.Add(time.Minute))
			}
			made = append(made, b)
			if awaitingDelivery(b) {
				want = append(want, b)
			}
		}
		for i := range made {
			b := made[(i*7+3)%len(made)] // 7 is prime to len(made) = 50: every build once
			wantOK(t, s.CreateBuild(t.Context(), b), "CreateBuild")
		}
		if len(want) != 4 {
			t.Fatalf("test setup: %d builds awaiting delivery, want 4", len(want))
		}
		wantDeliveryHead(t, s, want...)
		for _, limit := range []int{1, 3} {
			got := deliveries(t, s, limit)
			wantEqual(t, fmt.Sprintf("DueBuildDeliveries(%d)", limit), got, want[:limit])
		}
		for _, limit := range []int{0, -1, store.MaxLimit + 1} {
			got := deliveries(t, s, limit)
			if len(got) < len(want) {
				t.Fatalf("DueBuildDeliveries(%d): %d builds, want at least %d", limit, len(got), len(want))
			}
			wantEqual(t, fmt.Sprintf("head of DueBuildDeliveries(%d)", limit), got[:len(want)], want)
		}
		for _, b := range made {
			if !awaitingDelivery(b) {
				wantNotAwaiting(t, s, b)
			}
		}
	})

	t.Run("BuildsComeAndLeaveWithTheirStatus", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		set := createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub))
		otherSet := createSetting(t, s, createProject(t, s, other.org.ID, kiln.SourceGitHub))
		past := newPastBuilds(t, s, time.Date(2005, 1, 1, 0, 0, 0, 0, time.UTC))

		// A build whose setting deploys is pending delivery from the start, but is not listed
		// until it is complete.
		a := past.next(set, kiln.StatusPending)
		a.AutoDeployStatus = kiln.AutoDeployPending
		wantOK(t, s.CreateBuild(ctx, a), "CreateBuild")
		b := past.next(otherSet, kiln.StatusPending)
		b.AutoDeployStatus = kiln.AutoDeployPending
		wantOK(t, s.CreateBuild(ctx, b), "CreateBuild")
		c := past.create(set, kiln.StatusPending) // without auto deploy
		for _, x := range []*kiln.Build{a, b, c} {
			wantNotAwaiting(t, s, x)
		}
		for _, x := range []*kiln.Build{a, b, c} {
			wantOK(t, x.Transition(kiln.StatusRunning, now(), ""), "Transition")
			x.HeartbeatAt = ptr(now())
			wantOK(t, s.UpdateBuild(ctx, x, kiln.StatusPending, kiln.AllBuildFields), "UpdateBuild pending→running")
			wantNotAwaiting(t, s, x)
		}
		// Complete: listed, oldest first, across organizations (c has no auto deploy).
		for _, x := range []*kiln.Build{b, a, c} {
			wantOK(t, x.Transition(kiln.StatusComplete, now(), ""), "Transition")
			x.HeartbeatAt = nil
			wantOK(t, s.UpdateBuild(ctx, x, kiln.StatusRunning, kiln.AllBuildFields), "UpdateBuild running→complete")
		}
		wantDeliveryHead(t, s, a, b)
		wantNotAwaiting(t, s, c)
		wantNotQueued(t, s, kiln.StatusRunning, a)

		// Delivering, and back to pending for a retry: still listed, whole.
		a.AutoDeployStatus, a.AutoDeployAttempts = kiln.AutoDeployDelivering, 1
		wantOK(t, s.UpdateBuild(ctx, a, kiln.StatusComplete, kiln.AllBuildFields), "UpdateBuild complete→complete (delivering)")
		wantDeliveryHead(t, s, a, b)
		a.AutoDeployStatus, a.AutoDeployError = kiln.AutoDeployPending, "HTTP 503"
		wantOK(t, s.UpdateBuild(ctx, a, kiln.StatusComplete, kiln.AllBuildFields), "UpdateBuild complete→complete (retry)")
		wantDeliveryHead(t, s, a, b)

		// A refused update moves nothing.
		stale := *a
		stale.AutoDeployStatus = kiln.AutoDeploySucceeded
		wantCode(t, s.UpdateBuild(ctx, &stale, kiln.StatusRunning, kiln.AllBuildFields), kiln.EInvalidState, "UpdateBuild from a wrong status")
		wantDeliveryHead(t, s, a, b)

		// Succeeded and failed leave the list.
		a.AutoDeployStatus, a.AutoDeployError, a.AutoDeployAttempts = kiln.AutoDeploySucceeded, "", 2
		wantOK(t, s.UpdateBuild(ctx, a, kiln.StatusComplete, kiln.AllBuildFields), "UpdateBuild complete→complete (succeeded)")
		wantNotAwaiting(t, s, a)
		wantDeliveryHead(t, s, b)
		b.AutoDeployStatus, b.AutoDeployError, b.AutoDeployAttempts = kiln.AutoDeployFailed, "HTTP 404", 1
		wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusComplete, kiln.AllBuildFields), "UpdateBuild complete→complete (failed)")
		wantNotAwaiting(t, s, b)
		for _, x := range []*kiln.Build{a, b} {
			got, err := s.GetBuild(ctx, x.OrganizationID, x.ID)
			wantOK(t, err, "GetBuild")
			wantEqual(t, "build after delivery", got, x)
		}

		// A build that fails never awaits delivery, whatever its autoDeployStatus says.
		d := past.next(set, kiln.StatusRunning)
		d.AutoDeployStatus = kiln.AutoDeployPending
		wantOK(t, s.CreateBuild(ctx, d), "CreateBuild")
		wantOK(t, d.Transition(kiln.StatusFailed, now(), "compile error"), "Transition")
		wantOK(t, s.UpdateBuild(ctx, d, kiln.StatusRunning, kiln.AllBuildFields), "UpdateBuild running→failed")
		wantNotAwaiting(t, s, d)
	})
}
