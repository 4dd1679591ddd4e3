package storetest

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func testOnceKeys(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("SecondUseIsConflictUntilExpiry", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		a, b := createOrganization(t, s), createOrganization(t, s)
		at := now()
		expires := at.Add(15 * time.Minute)
		wantOK(t, s.UseOnce(ctx, a.org.ID, "state:n1", at, expires), "first UseOnce")
		wantCode(t, s.UseOnce(ctx, a.org.ID, "state:n1", at, expires), kiln.EConflict, "UseOnce again")
		wantCode(t, s.UseOnce(ctx, a.org.ID, "state:n1", expires.Add(-time.Millisecond), expires.Add(time.Hour)), kiln.EConflict, "UseOnce just before expiry")
		// Keys of another organization, and other keys, are independent.
		wantOK(t, s.UseOnce(ctx, b.org.ID, "state:n1", at, expires), "UseOnce in another organization")
		wantOK(t, s.UseOnce(ctx, a.org.ID, "state:n2", at, expires), "UseOnce of another key")
		// Once expired, the key may be recorded again, and is then taken until its new expiry.
		later := expires.Add(time.Second)
		wantOK(t, s.UseOnce(ctx, a.org.ID, "state:n1", later, later.Add(time.Minute)), "UseOnce after expiry")
		wantCode(t, s.UseOnce(ctx, a.org.ID, "state:n1", later, later.Add(time.Minute)), kiln.EConflict, "UseOnce again after expiry")
		wantCode(t, s.UseOnce(ctx, a.org.ID, "", at, expires), kiln.EBadRequest, "UseOnce of an empty key")
	})

	t.Run("ConcurrentUsesHaveOneWinner", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		at := now()
		errs := race(20, func(int) error { return s.UseOnce(ctx, f.org.ID, "state:race", at, at.Add(time.Minute)) })
		wantOneWinner(t, errs, kiln.EConflict)
	})
}
