package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// The delivery queues are read by due time and fairly across organizations, and an attempt is
// claimed and recorded by a write conditional on the next-attempt time read. Entries of other
// subtests may be due too, so these tests look only at their own organizations' entries.

// ofOrgs keeps the ids of the entries of the given organizations, in order.
func ofOrgs[T any](items []*T, org func(*T) string, id func(*T) string, orgs ...string) []string {
	out := []string{}
	for _, it := range items {
		for _, o := range orgs {
			if org(it) == o {
				out = append(out, id(it))
			}
		}
	}
	return out
}

func buildOrg(b *kiln.Build) string              { return b.OrganizationID }
func deliveryOrg(d *kiln.WebhookDelivery) string { return d.OrganizationID }

// deliveringBuild stores a complete build of set whose auto deploy is pending, due at due.
func deliveringBuild(t *testing.T, past pastBuilds, set *kiln.BuildSetting, due time.Time) *kiln.Build {
	t.Helper()
	b := past.next(set, kiln.StatusComplete)
	b.StartedAt, b.FinishedAt = ptr(b.CreatedAt.Add(time.Second)), ptr(b.CreatedAt.Add(time.Minute))
	b.AutoDeployStatus, b.AutoDeployNextAt = kiln.AutoDeployPending, due
	wantOK(t, past.s.CreateBuild(t.Context(), b), "CreateBuild")
	return b
}

func testDeliverySchedule(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("BuildsDueAtTheirTimeFairly", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		a, b := createOrganization(t, s), createOrganization(t, s)
		setA := createSetting(t, s, createProject(t, s, a.org.ID, kiln.SourceGitHub))
		setB := createSetting(t, s, createProject(t, s, b.org.ID, kiln.SourceGitHub))
		past := newPastBuilds(t, s, time.Date(2008, 1, 1, 0, 0, 0, 0, time.UTC))
		t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		// Organization a has four due before b's one; a fifth of a's is due later.
		var as []*kiln.Build
		for i := range 4 {
			as = append(as, deliveringBuild(t, past, setA, t0.Add(time.Duration(i)*time.Second)))
		}
		bb := deliveringBuild(t, past, setB, t0.Add(10*time.Second))
		late := deliveringBuild(t, past, setA, t0.Add(time.Hour))

		due := func(at time.Time, perOrg int) []string {
			got, err := s.DueBuildDeliveries(ctx, at, perOrg, store.MaxLimit)
			wantOK(t, err, "DueBuildDeliveries")
			return ofOrgs(got, buildOrg, buildID, a.org.ID, b.org.ID)
		}
		wantIDs(t, "due before any", due(t0.Add(-time.Millisecond), store.MaxLimit), []string{})
		wantIDs(t, "due at the first's time", due(t0, store.MaxLimit), []string{as[0].ID})
		wantIDs(t, "due at b's time, all", due(t0.Add(10*time.Second), store.MaxLimit),
			[]string{as[0].ID, as[1].ID, as[2].ID, as[3].ID, bb.ID})
		// Two per organization: b's comes although four of a's are due before it.
		wantIDs(t, "due, two per organization", due(t0.Add(time.Hour), 2), []string{as[0].ID, as[1].ID, bb.ID})
		wantIDs(t, "due, all", due(t0.Add(time.Hour), store.MaxLimit),
			[]string{as[0].ID, as[1].ID, as[2].ID, as[3].ID, bb.ID, late.ID})

		n, err := s.QueuedBuildDeliveries(ctx, a.org.ID, 3)
		wantOK(t, err, "QueuedBuildDeliveries")
		if n != 3 {
			t.Fatalf("QueuedBuildDeliveries(a, 3) = %d, want 3 (of 5)", n)
		}
		for org, want := range map[string]int{a.org.ID: 5, b.org.ID: 1} {
			n, err := s.QueuedBuildDeliveries(ctx, org, 100)
			wantOK(t, err, "QueuedBuildDeliveries")
			if n != want {
				t.Fatalf("QueuedBuildDeliveries(%s, 100) = %d, want %d", org, n, want)
			}
		}

		// A claim: the write conditional on the next-attempt time read succeeds once.
		first := *as[0]
		first.AutoDeployStatus, first.AutoDeployAttempts, first.AutoDeployNextAt = kiln.AutoDeployDelivering, 1, t0.Add(2*time.Hour)
		wantOK(t, s.RecordBuildDelivery(ctx, &first, as[0].AutoDeployNextAt), "RecordBuildDelivery (claim)")
		again := *as[0]
		again.AutoDeployAttempts = 7
		wantCode(t, s.RecordBuildDelivery(ctx, &again, as[0].AutoDeployNextAt), kiln.EInvalidState, "RecordBuildDelivery with a stale time")
		got, err := s.GetBuild(ctx, a.org.ID, first.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "claimed build", got, &first)
		wantIDs(t, "due after the claim", due(t0.Add(time.Hour), store.MaxLimit),
			[]string{as[1].ID, as[2].ID, as[3].ID, bb.ID, late.ID})
		// It writes the delivery fields only: other fields of b stay.
		done := first
		done.AutoDeployStatus, done.AutoDeployError, done.AutoDeployNextAt = kiln.AutoDeployFailed, "receiver answered 410", time.Time{}
		done.Branch, done.FailureReason = "changed", "changed"
		wantOK(t, s.RecordBuildDelivery(ctx, &done, first.AutoDeployNextAt), "RecordBuildDelivery (failed)")
		got, err = s.GetBuild(ctx, a.org.ID, first.ID)
		wantOK(t, err, "GetBuild")
		want := done
		want.Branch, want.FailureReason = first.Branch, first.FailureReason
		wantEqual(t, "recorded build", got, &want)
		wantNotAwaiting(t, s, got)
		// A delivery that ended is not claimed again, even with its (zero) time.
		late2 := done
		late2.AutoDeployStatus = kiln.AutoDeployDelivering
		wantCode(t, s.RecordBuildDelivery(ctx, &late2, time.Time{}), kiln.EInvalidState, "RecordBuildDelivery of an ended delivery")

		missing := *bb
		missing.ID = kiln.NewID()
		wantCode(t, s.RecordBuildDelivery(ctx, &missing, time.Time{}), kiln.ENotFound, "RecordBuildDelivery of a missing build")
		// A build that is not complete is never recorded.
		running := past.create(setB, kiln.StatusRunning)
		running.AutoDeployStatus = kiln.AutoDeployDelivering
		wantCode(t, s.RecordBuildDelivery(ctx, running, time.Time{}), kiln.EInvalidState, "RecordBuildDelivery of a running build")
	})

	t.Run("BuildClaimRace", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		_, set := createOrganizationSetting(t, s)
		past := newPastBuilds(t, s, time.Date(2008, 2, 1, 0, 0, 0, 0, time.UTC))
		b := deliveringBuild(t, past, set, time.Time{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 8 {
			wg.Go(func() {
				c := *b
				c.AutoDeployStatus, c.AutoDeployAttempts, c.AutoDeployNextAt = kiln.AutoDeployDelivering, i+1, now().Add(time.Hour)
				if err := s.RecordBuildDelivery(ctx, &c, time.Time{}); err == nil {
					mu.Lock()
					won++
					mu.Unlock()
				} else if !kiln.IsCode(err, kiln.EInvalidState) {
					t.Errorf("RecordBuildDelivery: %v", err)
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d of 8 concurrent claims succeeded, want exactly 1", won)
		}
	})

	t.Run("WebhookDeliveriesDueAtTheirTimeFairly", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		a, b := createOrganization(t, s), createOrganization(t, s)
		wa, wb := createWebhook(t, s, a.org.ID), createWebhook(t, s, b.org.ID)
		m := newDeliveryMaker(t, s, time.Date(2008, 3, 1, 0, 0, 0, 0, time.UTC))
		t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		mk := func(w *kiln.Webhook, due time.Time) *kiln.WebhookDelivery {
			d := m.next(w, kiln.DeliveryPending)
			d.NextAttemptAt = due
			wantOK(t, s.CreateWebhookDelivery(ctx, d), "CreateWebhookDelivery")
			return d
		}
		var as []*kiln.WebhookDelivery
		for i := range 3 {
			as = append(as, mk(wa, t0.Add(time.Duration(i)*time.Second)))
		}
		db := mk(wb, t0.Add(10*time.Second))
		m.create(wb, kiln.DeliverySucceeded) // not queued
		due := func(at time.Time, perOrg int) []string {
			got, err := s.DueWebhookDeliveries(ctx, at, perOrg, store.MaxLimit)
			wantOK(t, err, "DueWebhookDeliveries")
			return ofOrgs(got, deliveryOrg, deliveryID, a.org.ID, b.org.ID)
		}
		wantIDs(t, "due before any", due(t0.Add(-time.Millisecond), store.MaxLimit), []string{})
		wantIDs(t, "due at the second's time", due(t0.Add(time.Second), store.MaxLimit), []string{as[0].ID, as[1].ID})
		wantIDs(t, "due, one per organization", due(t0.Add(time.Hour), 1), []string{as[0].ID, db.ID})
		for org, want := range map[string]int{a.org.ID: 3, b.org.ID: 1} {
			n, err := s.QueuedWebhookDeliveries(ctx, org, 100)
			wantOK(t, err, "QueuedWebhookDeliveries")
			if n != want {
				t.Fatalf("QueuedWebhookDeliveries(%s, 100) = %d, want %d", org, n, want)
			}
		}
		if n, err := s.QueuedWebhookDeliveries(ctx, a.org.ID, 2); err != nil || n != 2 {
			t.Fatalf("QueuedWebhookDeliveries(a, 2) = %d, %v; want 2", n, err)
		}

		claim := *as[0]
		claim.Attempts, claim.NextAttemptAt, claim.UpdatedAt = 1, t0.Add(2*time.Hour), now()
		wantOK(t, s.RecordWebhookDelivery(ctx, &claim, as[0].NextAttemptAt), "RecordWebhookDelivery (claim)")
		wantCode(t, s.RecordWebhookDelivery(ctx, &claim, as[0].NextAttemptAt), kiln.EInvalidState, "RecordWebhookDelivery with a stale time")
		wantIDs(t, "due after the claim", due(t0.Add(time.Hour), store.MaxLimit), []string{as[1].ID, as[2].ID, db.ID})
		ok := claim
		ok.Status, ok.ResponseStatus, ok.NextAttemptAt = kiln.DeliverySucceeded, 204, time.Time{}
		wantOK(t, s.RecordWebhookDelivery(ctx, &ok, claim.NextAttemptAt), "RecordWebhookDelivery (succeeded)")
		got, err := s.GetWebhookDelivery(ctx, a.org.ID, wa.ID, ok.ID)
		wantOK(t, err, "GetWebhookDelivery")
		wantEqual(t, "recorded delivery", got, &ok)
		// Not pending any more: nothing to record.
		wantCode(t, s.RecordWebhookDelivery(ctx, &ok, time.Time{}), kiln.EInvalidState, "RecordWebhookDelivery of a finished delivery")
		missing := *db
		missing.ID = kiln.NewID()
		wantCode(t, s.RecordWebhookDelivery(ctx, &missing, db.NextAttemptAt), kiln.ENotFound, "RecordWebhookDelivery of a missing delivery")
		if n, err := s.QueuedWebhookDeliveries(ctx, a.org.ID, 100); err != nil || n != 2 {
			t.Fatalf("QueuedWebhookDeliveries(a) after one succeeded = %d, %v; want 2", n, err)
		}
	})
}
