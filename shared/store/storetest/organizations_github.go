package storetest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

var installationSeq atomic.Int64

// newInstallationID returns a GitHub App installation id no other test uses, shaped like GitHub's
// (a number).
func newInstallationID() string {
	return fmt.Sprintf("%d%05d", time.Now().UnixMilli(), installationSeq.Add(1)%100000)
}

// link links an installation and fails the test if that does not work.
func link(t *testing.T, s store.Store, orgID, installationID string, at time.Time) *kiln.Organization {
	t.Helper()
	org, err := s.LinkGitHubInstallation(t.Context(), orgID, installationID, at)
	wantOK(t, err, "LinkGitHubInstallation "+installationID)
	return org
}

// wantOrganization fails the test unless the stored organization equals want.
func wantOrganization(t *testing.T, s store.Store, what string, want *kiln.Organization) {
	t.Helper()
	got, err := s.GetOrganization(t.Context(), want.ID)
	wantOK(t, err, what+": GetOrganization")
	wantEqual(t, what, got, want)
}

// wantLinkedTo fails the test unless GetOrganizationByInstallation finds want, or, when want is
// nil, answers not_found.
func wantLinkedTo(t *testing.T, s store.Store, installationID string, want *kiln.Organization) {
	t.Helper()
	got, err := s.GetOrganizationByInstallation(t.Context(), installationID)
	if want == nil {
		wantCode(t, err, kiln.ENotFound, "GetOrganizationByInstallation of free installation "+installationID)
		return
	}
	wantOK(t, err, "GetOrganizationByInstallation "+installationID)
	wantEqual(t, "organization of installation "+installationID, got, want)
}

// linked is org as it is after linking installationID at time at.
func linked(org *kiln.Organization, installationID string, at time.Time) *kiln.Organization {
	o := *org
	o.Integrations.GitHubInstallationID = installationID
	o.UpdatedAt = at
	return &o
}

func testGitHubInstallations(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("LinkAndFind", func(t *testing.T) {
		s := open(t)
		f := createOrganization(t, s)
		id, at := newInstallationID(), now().Add(time.Minute)
		want := linked(f.org, id, at)
		wantEqual(t, "returned organization", link(t, s, f.org.ID, id, at), want)
		wantOrganization(t, s, "linked organization", want)
		wantLinkedTo(t, s, id, want)

		// Linking it again changes nothing, not even updatedAt.
		wantEqual(t, "organization linked again", link(t, s, f.org.ID, id, at.Add(time.Minute)), want)
		wantOrganization(t, s, "organization linked again", want)
		wantLinkedTo(t, s, id, want)
	})

	t.Run("InUseElsewhereChangesNothing", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		holder, bare, other := createOrganization(t, s), createOrganization(t, s), createOrganization(t, s)
		id, otherID := newInstallationID(), newInstallationID()
		h := link(t, s, holder.org.ID, id, now())
		o := link(t, s, other.org.ID, otherID, now())

		_, err := s.LinkGitHubInstallation(ctx, bare.org.ID, id, now().Add(time.Hour))
		wantCode(t, err, kiln.EGitHubInstallationInUse, "LinkGitHubInstallation of another organization's installation")
		_, err = s.LinkGitHubInstallation(ctx, other.org.ID, id, now().Add(time.Hour))
		wantCode(t, err, kiln.EGitHubInstallationInUse, "LinkGitHubInstallation replacing with another organization's installation")

		wantOrganization(t, s, "organization without installation", bare.org)
		wantOrganization(t, s, "organization that kept its installation", o)
		wantOrganization(t, s, "holder", h)
		wantLinkedTo(t, s, id, h)
		wantLinkedTo(t, s, otherID, o)
	})

	t.Run("ReplaceFreesTheOldInstallation", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, g := createOrganization(t, s), createOrganization(t, s)
		old, replacement := newInstallationID(), newInstallationID()
		link(t, s, f.org.ID, old, now())
		at := now().Add(time.Minute)
		want := linked(f.org, replacement, at)
		wantEqual(t, "returned organization", link(t, s, f.org.ID, replacement, at), want)
		wantOrganization(t, s, "organization after replacing", want)
		wantLinkedTo(t, s, replacement, want)
		wantLinkedTo(t, s, old, nil)

		gl := link(t, s, g.org.ID, old, now()) // the old one is free for others
		wantLinkedTo(t, s, old, gl)
		_, err := s.LinkGitHubInstallation(ctx, g.org.ID, replacement, now())
		wantCode(t, err, kiln.EGitHubInstallationInUse, "LinkGitHubInstallation of the replacement by another organization")
		wantOrganization(t, s, "organization after the refused link", gl)
	})

	t.Run("UnlinkFreesTheInstallation", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, g := createOrganization(t, s), createOrganization(t, s)
		id := newInstallationID()
		link(t, s, f.org.ID, id, now())
		at := now().Add(time.Minute)
		want := linked(f.org, "", at)
		got, err := s.UnlinkGitHubInstallation(ctx, f.org.ID, at)
		wantOK(t, err, "UnlinkGitHubInstallation")
		wantEqual(t, "returned organization", got, want)
		wantOrganization(t, s, "unlinked organization", want)
		wantLinkedTo(t, s, id, nil)

		// Unlinking an organization without an installation changes nothing.
		got, err = s.UnlinkGitHubInstallation(ctx, f.org.ID, at.Add(time.Minute))
		wantOK(t, err, "UnlinkGitHubInstallation again")
		wantEqual(t, "organization unlinked again", got, want)
		got, err = s.UnlinkGitHubInstallation(ctx, g.org.ID, at)
		wantOK(t, err, "UnlinkGitHubInstallation of an organization that never had one")
		wantEqual(t, "organization that never had one", got, g.org)
		wantOrganization(t, s, "organization that never had one", g.org)

		wantLinkedTo(t, s, id, link(t, s, g.org.ID, id, now()))
		wantLinkedTo(t, s, id, link(t, s, g.org.ID, id, now())) // a no-op
		// Relinking after an unlink works too.
		_, err = s.UnlinkGitHubInstallation(ctx, g.org.ID, now())
		wantOK(t, err, "UnlinkGitHubInstallation")
		wantLinkedTo(t, s, id, link(t, s, f.org.ID, id, now()))
	})

	t.Run("UnknownOrganizationIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		unknown, id := kiln.NewID(), newInstallationID()
		_, err := s.LinkGitHubInstallation(ctx, unknown, id, now())
		wantCode(t, err, kiln.ENotFound, "LinkGitHubInstallation of an unknown organization")
		_, err = s.UnlinkGitHubInstallation(ctx, unknown, now())
		wantCode(t, err, kiln.ENotFound, "UnlinkGitHubInstallation of an unknown organization")
		_, err = s.GetOrganization(ctx, unknown)
		wantCode(t, err, kiln.ENotFound, "GetOrganization after a refused link")
		wantLinkedTo(t, s, id, nil)
		f := createOrganization(t, s) // the refused link reserved nothing
		wantLinkedTo(t, s, id, link(t, s, f.org.ID, id, now()))
	})

	t.Run("EmptyInstallationIsRefused", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		_, err := s.LinkGitHubInstallation(ctx, f.org.ID, "", now())
		wantCode(t, err, kiln.EBadRequest, "LinkGitHubInstallation with an empty id")
		wantOrganization(t, s, "organization after the refused link", f.org)
		wantLinkedTo(t, s, "", nil)
	})

	t.Run("UpdateOrganizationLeavesIntegrations", func(t *testing.T) {
		s := open(t)
		f, g, h := createOrganization(t, s), createOrganization(t, s), createOrganization(t, s)
		id, other := newInstallationID(), newInstallationID()
		want := link(t, s, f.org.ID, id, now())
		want.Name, want.Plan, want.UpdatedAt = "Renamed", kiln.PlanPro, want.UpdatedAt.Add(time.Minute)
		for _, integrations := range []kiln.Integrations{{}, {GitHubInstallationID: other}} {
			update := *want
			update.Integrations = integrations
			wantOK(t, s.UpdateOrganization(t.Context(), &update), "UpdateOrganization")
			wantOrganization(t, s, fmt.Sprintf("organization updated with %+v", integrations), want)
			wantLinkedTo(t, s, id, want)
			wantLinkedTo(t, s, other, nil)
		}
		// Nor does it link an installation to an organization without one.
		update := *g.org
		update.Integrations.GitHubInstallationID = other
		wantOK(t, s.UpdateOrganization(t.Context(), &update), "UpdateOrganization")
		wantOrganization(t, s, "organization without installation after update", g.org)
		wantLinkedTo(t, s, other, nil)
		wantLinkedTo(t, s, other, link(t, s, h.org.ID, other, now()))
	})

	t.Run("CreateOrganizationLinksNothing", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := newOrganization()
		id := newInstallationID()
		f.org.Integrations.GitHubInstallationID = id
		wantOK(t, s.CreateOrganization(ctx, f.org, f.owner, f.token), "CreateOrganization")
		f.org.Integrations = kiln.Integrations{}
		wantOrganization(t, s, "new organization", f.org)
		wantLinkedTo(t, s, id, nil)
	})

	t.Run("RaceToLinkOneInstallation", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		const n = 50
		orgs := make([]fixture, n)
		for i := range orgs {
			orgs[i] = createOrganization(t, s)
		}
		id := newInstallationID()
		results := make([]*kiln.Organization, n)
		errs := race(n, func(i int) error {
			var err error
			results[i], err = s.LinkGitHubInstallation(ctx, orgs[i].org.ID, id, now())
			return err
		})
		winner := wantOneWinner(t, errs, kiln.EGitHubInstallationInUse)
		wantLinkedTo(t, s, id, results[winner])
		for i, f := range orgs {
			if i != winner {
				wantOrganization(t, s, "loser", f.org)
			}
		}
	})

	t.Run("RaceToRelinkOneOrganization", func(t *testing.T) {
		// Concurrent links and unlinks of one organization all succeed, and afterwards exactly
		// the installation it ends with is taken: every replaced one was freed.
		s, ctx := open(t), t.Context()
		f, g := createOrganization(t, s), createOrganization(t, s)
		ids := []string{newInstallationID()}
		link(t, s, f.org.ID, ids[0], now())
		const n = 12
		for range n {
			ids = append(ids, newInstallationID())
		}
		errs := race(n, func(i int) error {
			if i%4 == 3 {
				_, err := s.UnlinkGitHubInstallation(ctx, f.org.ID, now())
				return err
			}
			_, err := s.LinkGitHubInstallation(ctx, f.org.ID, ids[i+1], now())
			return err
		})
		for i, err := range errs {
			wantOK(t, err, fmt.Sprintf("racer %d", i))
		}
		got, err := s.GetOrganization(ctx, f.org.ID)
		wantOK(t, err, "GetOrganization")
		final := got.Integrations.GitHubInstallationID
		for _, id := range ids {
			if id == final {
				wantLinkedTo(t, s, id, got)
				continue
			}
			wantLinkedTo(t, s, id, nil)
			link(t, s, g.org.ID, id, now()) // free for others
		}
	})
}
