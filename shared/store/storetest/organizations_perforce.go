package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// newPerforce returns Perforce credentials whose sealed ticket holds every byte value, 0x00
// included.
func newPerforce(server string, at time.Time) *kiln.PerforceCredentials {
	ticket := make([]byte, 0, 260)
	for i := range 256 {
		ticket = append(ticket, byte(i))
	}
	ticket = append(ticket, 0, 0, 0xff, 0) // trailing zero bytes are kept too
	return &kiln.PerforceCredentials{
		ServerURL:   server,
		UserName:    "build-bot",
		Ticket:      ticket,
		Fingerprint: "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01",
		UpdatedAt:   at,
	}
}

// setPerforce saves (or clears) credentials and fails the test if that does not work.
func setPerforce(t *testing.T, s store.Store, orgID string, creds *kiln.PerforceCredentials, at time.Time) *kiln.Organization {
	t.Helper()
	org, err := s.SetPerforce(t.Context(), orgID, creds, at)
	wantOK(t, err, "SetPerforce")
	return org
}

// withPerforce is org as it is after SetPerforce(creds) at time at.
func withPerforce(org *kiln.Organization, creds *kiln.PerforceCredentials, at time.Time) *kiln.Organization {
	o := *org
	if creds != nil {
		c := *creds
		c.Ticket = bytes.Clone(creds.Ticket)
		o.Perforce = &c
	} else {
		o.Perforce = nil
	}
	o.UpdatedAt = at
	return &o
}

// wantTicket fails the test unless org's Perforce ticket is exactly want, byte for byte.
func wantTicket(t *testing.T, what string, org *kiln.Organization, want []byte) {
	t.Helper()
	if org.Perforce == nil {
		t.Fatalf("%s: no Perforce credentials", what)
	}
	if !bytes.Equal(org.Perforce.Ticket, want) {
		t.Fatalf("%s: ticket %x, want %x", what, org.Perforce.Ticket, want)
	}
}

func testPerforce(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("NoneAtFirst", func(t *testing.T) {
		s := open(t)
		f := newOrganization()
		f.org.Perforce = newPerforce("ssl:ignored:1666", now()) // CreateOrganization ignores it
		wantOK(t, s.CreateOrganization(t.Context(), f.org, f.owner, f.token), "CreateOrganization")
		got, err := s.GetOrganization(t.Context(), f.org.ID)
		wantOK(t, err, "GetOrganization")
		if got.Perforce != nil {
			t.Fatalf("new organization has Perforce credentials %+v, want none", got.Perforce)
		}
	})

	t.Run("SaveAndGet", func(t *testing.T) {
		s := open(t)
		f := createOrganization(t, s)
		at := now().Add(time.Minute)
		creds := newPerforce("ssl:perforce.example.com:1666", at.Add(-time.Second))
		want := withPerforce(f.org, creds, at)
		got := setPerforce(t, s, f.org.ID, creds, at)
		wantEqual(t, "returned organization", got, want)
		wantTicket(t, "returned organization", got, creds.Ticket)
		wantOrganization(t, s, "organization with Perforce", want)
		stored, err := s.GetOrganization(t.Context(), f.org.ID)
		wantOK(t, err, "GetOrganization")
		wantTicket(t, "stored organization", stored, creds.Ticket)
	})

	t.Run("Replace", func(t *testing.T) {
		s := open(t)
		f := createOrganization(t, s)
		setPerforce(t, s, f.org.ID, newPerforce("ssl:old.example.com:1666", now()), now())
		at := now().Add(time.Hour)
		creds := &kiln.PerforceCredentials{
			ServerURL: "tcp:new.example.com:1666", UserName: "other", Ticket: []byte{0, 1, 0},
			UpdatedAt: at, // no fingerprint over tcp
		}
		want := withPerforce(f.org, creds, at)
		wantEqual(t, "returned organization", setPerforce(t, s, f.org.ID, creds, at), want)
		wantOrganization(t, s, "organization with replaced Perforce", want)
		stored, err := s.GetOrganization(t.Context(), f.org.ID)
		wantOK(t, err, "GetOrganization")
		wantTicket(t, "replaced ticket", stored, []byte{0, 1, 0})
	})

	t.Run("Password", func(t *testing.T) {
		// A password's credentials keep the sealed password and the expiry of kiln's ticket;
		// replacing them with a ticket's drops both.
		s := open(t)
		f := createOrganization(t, s)
		at := now()
		creds := newPerforce("ssl:perforce.example.com:1666", at)
		creds.Password, creds.TicketExpiresAt = []byte{9, 0, 9}, at.Add(12*time.Hour)
		want := withPerforce(f.org, creds, at)
		wantEqual(t, "returned organization", setPerforce(t, s, f.org.ID, creds, at), want)
		wantOrganization(t, s, "organization with a Perforce password", want)
		plain := newPerforce("ssl:perforce.example.com:1666", at.Add(time.Minute))
		want = withPerforce(f.org, plain, at.Add(time.Minute))
		wantEqual(t, "organization with a ticket again", setPerforce(t, s, f.org.ID, plain, at.Add(time.Minute)), want)
	})

	t.Run("ClearWithNil", func(t *testing.T) {
		s := open(t)
		f := createOrganization(t, s)
		setPerforce(t, s, f.org.ID, newPerforce("ssl:perforce.example.com:1666", now()), now())
		at := now().Add(2 * time.Hour)
		want := withPerforce(f.org, nil, at)
		wantEqual(t, "returned organization", setPerforce(t, s, f.org.ID, nil, at), want)
		wantOrganization(t, s, "organization without Perforce", want)

		// Clearing again is no error and only moves updatedAt.
		want = withPerforce(f.org, nil, at.Add(time.Minute))
		wantEqual(t, "cleared again", setPerforce(t, s, f.org.ID, nil, at.Add(time.Minute)), want)
		wantOrganization(t, s, "organization cleared again", want)
	})

	t.Run("UpdateOrganizationLeavesIt", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		creds := newPerforce("ssl:perforce.example.com:1666", now())
		saved := setPerforce(t, s, f.org.ID, creds, now())

		update := *f.org
		update.Name = "Renamed"
		update.Plan = kiln.PlanPro
		update.UpdatedAt = now().Add(time.Hour)
		update.Perforce = nil // ignored: only SetPerforce changes the credentials
		wantOK(t, s.UpdateOrganization(ctx, &update), "UpdateOrganization without Perforce")
		want := update
		want.Perforce = saved.Perforce
		wantOrganization(t, s, "organization updated without Perforce", &want)

		update.Perforce = newPerforce("ssl:other.example.com:1666", now()) // ignored as well
		wantOK(t, s.UpdateOrganization(ctx, &update), "UpdateOrganization with other Perforce")
		wantOrganization(t, s, "organization updated with other Perforce", &want)
	})

	t.Run("UnknownIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := newOrganization() // never stored
		for _, creds := range []*kiln.PerforceCredentials{newPerforce("ssl:perforce.example.com:1666", now()), nil} {
			_, err := s.SetPerforce(ctx, other.org.ID, creds, now())
			wantCode(t, err, kiln.ENotFound, "SetPerforce of an unknown organization")
			_, err = s.GetOrganization(ctx, other.org.ID)
			wantCode(t, err, kiln.ENotFound, "GetOrganization after a refused SetPerforce")
		}
		// The existing organization is untouched.
		wantOrganization(t, s, "other organization", f.org)
	})

	t.Run("SeparatePerOrganization", func(t *testing.T) {
		s := open(t)
		a, b := createOrganization(t, s), createOrganization(t, s)
		at := now().Add(time.Minute)
		credsA := newPerforce("ssl:a.example.com:1666", at)
		wantA := withPerforce(a.org, credsA, at)
		setPerforce(t, s, a.org.ID, credsA, at)
		wantOrganization(t, s, "organization b", b.org)
		wantOrganization(t, s, "organization a", wantA)
	})

	t.Run("ByInstallationAndLink", func(t *testing.T) {
		s := open(t)
		f := createOrganization(t, s)
		at := now().Add(time.Minute)
		creds := newPerforce("ssl:perforce.example.com:1666", at)
		want := withPerforce(f.org, creds, at)
		setPerforce(t, s, f.org.ID, creds, at)

		id, linkAt := newInstallationID(), at.Add(time.Minute)
		want = linked(want, id, linkAt)
		wantEqual(t, "linked organization", link(t, s, f.org.ID, id, linkAt), want)
		wantLinkedTo(t, s, id, want)
		got, err := s.GetOrganizationByInstallation(t.Context(), id)
		wantOK(t, err, "GetOrganizationByInstallation")
		wantTicket(t, "organization by installation", got, creds.Ticket)

		unlinkAt := linkAt.Add(time.Minute)
		unlinked, err := s.UnlinkGitHubInstallation(t.Context(), f.org.ID, unlinkAt)
		wantOK(t, err, "UnlinkGitHubInstallation")
		want = linked(want, "", unlinkAt)
		wantEqual(t, "unlinked organization", unlinked, want)
	})
}
