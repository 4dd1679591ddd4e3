package storetest

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// lastGitHubID hands out GitHub user ids no other test uses, even on a store shared between
// subtests.
var lastGitHubID atomic.Int64

func init() { lastGitHubID.Store(time.Now().UnixNano() / 1000) }

// newGitHubUser builds (without storing) a user as a first sign-in presents them: a new kiln id
// and a GitHub id no other test has.
func newGitHubUser() *kiln.GitHubUser {
	id := kiln.NewID()
	return &kiln.GitHubUser{
		User:     kiln.User{ID: id, Email: "gh-" + id + "@example.com", Name: "GitHub " + id, CreatedAt: now()},
		GitHubID: lastGitHubID.Add(1),
		Login:    "login-" + id,
	}
}

// signIn stores a first sign-in of a fresh user and fails the test if that does not work.
func signIn(t *testing.T, s store.Store) *kiln.GitHubUser {
	t.Helper()
	u := newGitHubUser()
	got, err := s.SignInGitHubUser(t.Context(), u)
	wantOK(t, err, "first sign-in")
	wantEqual(t, "user after first sign-in", got, u)
	return u
}

// membership builds the membership of user u in orgID with role, made at at.
func membership(orgID string, u kiln.User, role kiln.Role, at time.Time) *kiln.Member {
	return &kiln.Member{OrganizationID: orgID, User: u, Role: role, CreatedAt: at}
}

func testUsers(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("SignInCreatesThenUpdates", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		first := signIn(t, s)
		got, err := s.GetGitHubUser(ctx, first.ID)
		wantOK(t, err, "get after first sign-in")
		wantEqual(t, "user read after first sign-in", got, first)

		// A later sign-in comes with a fresh id and time, and new details from GitHub: the
		// details change, the id and creation time stay.
		again := newGitHubUser()
		again.GitHubID = first.GitHubID
		again.CreatedAt = first.CreatedAt.Add(time.Hour)
		want := &kiln.GitHubUser{
			User:     kiln.User{ID: first.ID, Email: again.Email, Name: again.Name, CreatedAt: first.CreatedAt},
			GitHubID: first.GitHubID, Login: again.Login,
		}
		got, err = s.SignInGitHubUser(ctx, again)
		wantOK(t, err, "second sign-in")
		wantEqual(t, "user after second sign-in", got, want)
		got, err = s.GetGitHubUser(ctx, first.ID)
		wantOK(t, err, "get after second sign-in")
		wantEqual(t, "user read after second sign-in", got, want)
		_, err = s.GetGitHubUser(ctx, again.ID)
		wantCode(t, err, kiln.ENotFound, "the second sign-in's unused id")

		other := signIn(t, s)
		if other.ID == first.ID {
			t.Fatalf("two GitHub users share the kiln id %s", other.ID)
		}
		got, err = s.GetGitHubUser(ctx, first.ID)
		wantOK(t, err, "get after another user's sign-in")
		wantEqual(t, "user after another user's sign-in", got, want)
	})

	t.Run("GetUnknownIsNotFound", func(t *testing.T) {
		s := open(t)
		for _, id := range []string{kiln.NewID(), ""} {
			_, err := s.GetGitHubUser(t.Context(), id)
			wantCode(t, err, kiln.ENotFound, "get unknown user "+id)
		}
		// A member made by an operator is no GitHub user.
		f := createOrganization(t, s)
		_, err := s.GetGitHubUser(t.Context(), f.owner.User.ID)
		wantCode(t, err, kiln.ENotFound, "get an operator-made member")
	})

	t.Run("ConcurrentFirstSignInsMakeOneUser", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		base := newGitHubUser()
		users := make([]*kiln.GitHubUser, 8)
		for i := range users {
			users[i] = newGitHubUser()
			users[i].GitHubID = base.GitHubID
		}
		got := make([]*kiln.GitHubUser, len(users))
		errs := race(len(users), func(i int) error {
			var err error
			got[i], err = s.SignInGitHubUser(ctx, users[i])
			return err
		})
		ids := map[string]bool{}
		for i, err := range errs {
			wantOK(t, err, "concurrent sign-in")
			ids[got[i].ID] = true
		}
		if len(ids) != 1 {
			t.Fatalf("concurrent first sign-ins made %d users, want 1: %v", len(ids), ids)
		}
		stored, err := s.GetGitHubUser(ctx, got[0].ID)
		wantOK(t, err, "get the one user")
		if !slices.ContainsFunc(users, func(u *kiln.GitHubUser) bool { return u.ID == stored.ID }) {
			t.Fatalf("the user's id %s is none of the sign-ins'", stored.ID)
		}
	})

	t.Run("MembershipsAcrossOrganizations", func(t *testing.T) { testMemberships(t, open(t)) })
	t.Run("Sessions", func(t *testing.T) { testSessions(t, open(t)) })
	t.Run("SessionOrganizationAndDelete", func(t *testing.T) { testSessionChanges(t, open(t)) })
}

// testMemberships makes a GitHub user a member of three organizations, each without a token: as
// the owner of one they create, by an operator's CreateMember, and by accepting an invitation.
func testMemberships(t *testing.T, s store.Store) {
	ctx := t.Context()
	u := signIn(t, s)
	at := now()

	// Their own organization, made in the console: no token.
	own := newOrganization()
	own.owner = membership(own.org.ID, u.User, kiln.RoleOwner, at)
	wantOK(t, s.CreateOrganization(ctx, own.org, own.owner, nil), "create an organization without a token")
	// Two other organizations, older in id order than the memberships below.
	joined, invited := createOrganization(t, s), createOrganization(t, s)
	// Accepting the invitation comes before the operator's CreateMember, so oldest first is
	// not the organizations' order.
	inv := newInvitation(invited, u.Email, kiln.RoleViewer, at)
	wantOK(t, s.CreateInvitation(ctx, inv), "invite the user")
	byInvite := membership(invited.org.ID, u.User, kiln.RoleViewer, at.Add(time.Second))
	wantOK(t, s.AcceptInvitation(ctx, inv, now(), byInvite, nil), "accept without a token")
	byOperator := membership(joined.org.ID, u.User, kiln.RoleMember, at.Add(2*time.Second))
	wantOK(t, s.CreateMember(ctx, byOperator, nil), "create a member without a token")

	for _, m := range []*kiln.Member{own.owner, byInvite, byOperator} {
		got, err := s.GetMember(ctx, m.OrganizationID, u.ID)
		wantOK(t, err, "get the membership in "+m.OrganizationID)
		wantEqual(t, "membership in "+m.OrganizationID, got, m)
		tokens, _, err := s.ListTokens(ctx, m.OrganizationID, u.ID, store.Page{})
		wantOK(t, err, "list the member's tokens")
		wantEqual(t, "tokens of a member made without one", tokens, []*kiln.Token(nil))
	}

	wantMemberships := func(what, userID string, want ...*kiln.Member) {
		t.Helper()
		got, err := s.ListMemberships(ctx, userID)
		wantOK(t, err, what)
		wantEqual(t, what, got, want)
	}
	wantMemberships("memberships, oldest first", u.ID, own.owner, byInvite, byOperator)
	wantMemberships("another member's memberships", joined.owner.User.ID, joined.owner)
	wantMemberships("an unknown user's memberships", kiln.NewID())

	changed, err := s.SetMemberRole(ctx, joined.org.ID, u.ID, kiln.RoleAdmin)
	wantOK(t, err, "set role")
	byOperator.Role = kiln.RoleAdmin
	wantEqual(t, "changed membership", changed, byOperator)
	wantMemberships("memberships after a role change", u.ID, own.owner, byInvite, byOperator)

	wantOK(t, s.RemoveMember(ctx, invited.org.ID, u.ID), "remove from the invited organization")
	wantMemberships("memberships after a removal", u.ID, own.owner, byOperator)
	wantMemberships("the other owner's memberships after the removal", invited.owner.User.ID, invited.owner)
}

// newSession builds (without storing) a session of userID created at at, lasting kiln.SessionTTL.
func newSession(userID string, at time.Time) *kiln.Session {
	return &kiln.Session{
		ID: kiln.NewID(), UserID: userID, Hash: newCredential("", "ksess_").Hash,
		CreatedAt: at, ExpiresAt: at.Add(kiln.SessionTTL),
		UserAgent: "Mozilla/5.0 test", Address: "192.0.2.7",
	}
}

func testSessions(t *testing.T, s store.Store) {
	ctx := t.Context()
	u, other := signIn(t, s), signIn(t, s)
	at := now()
	expired := newSession(u.ID, at.Add(-kiln.SessionTTL-time.Hour))
	older := newSession(u.ID, at.Add(-time.Hour))
	newer := newSession(u.ID, at)
	newer.OrganizationID = kiln.NewID()
	others := newSession(other.ID, at)
	for _, sess := range []*kiln.Session{expired, older, newer, others} {
		wantOK(t, s.CreateSession(ctx, sess), "create session")
	}

	takenID := newSession(u.ID, at)
	takenID.ID = older.ID
	takenHash := newSession(u.ID, at)
	takenHash.Hash = older.Hash
	takenHashOther := newSession(other.ID, at)
	takenHashOther.Hash = older.Hash
	for _, tc := range []struct {
		name string
		sess *kiln.Session
	}{{"taken id", takenID}, {"taken hash", takenHash}, {"hash taken by another user", takenHashOther}} {
		wantCode(t, s.CreateSession(ctx, tc.sess), kiln.EConflict, "create with a "+tc.name)
	}

	for _, tc := range []struct {
		name string
		want *kiln.Session
	}{{"expired", expired}, {"older", older}, {"newer", newer}, {"another user's", others}} {
		got, err := s.GetSessionByHash(ctx, tc.want.Hash)
		wantOK(t, err, "get the "+tc.name+" session by hash")
		wantEqual(t, tc.name+" session", got, tc.want)
	}
	_, err := s.GetSessionByHash(ctx, newCredential("", "ksess_").Hash)
	wantCode(t, err, kiln.ENotFound, "get an unknown hash")

	list, err := s.ListSessions(ctx, u.ID, at)
	wantOK(t, err, "list sessions")
	wantEqual(t, "unexpired sessions, newest first", list, []*kiln.Session{newer, older})
	list, err = s.ListSessions(ctx, u.ID, older.ExpiresAt)
	wantOK(t, err, "list sessions when the older expires")
	wantEqual(t, "sessions when the older expires", list, []*kiln.Session{newer})
	list, err = s.ListSessions(ctx, kiln.NewID(), at)
	wantOK(t, err, "list an unknown user's sessions")
	wantEqual(t, "an unknown user's sessions", list, []*kiln.Session(nil))
}

func testSessionChanges(t *testing.T, s store.Store) {
	ctx := t.Context()
	u, other := signIn(t, s), signIn(t, s)
	mine, others := newSession(u.ID, now()), newSession(other.ID, now())
	wantOK(t, s.CreateSession(ctx, mine), "create mine")
	wantOK(t, s.CreateSession(ctx, others), "create the other's")

	orgID := kiln.NewID()
	got, err := s.SetSessionOrganization(ctx, u.ID, mine.ID, orgID)
	wantOK(t, err, "set the session's organization")
	mine.OrganizationID = orgID
	wantEqual(t, "session after the switch", got, mine)
	got, err = s.GetSessionByHash(ctx, mine.Hash)
	wantOK(t, err, "get after the switch")
	wantEqual(t, "session read after the switch", got, mine)

	for _, tc := range []struct{ name, userID, sessionID string }{
		{"another user's session", u.ID, others.ID},
		{"a session as another user", other.ID, mine.ID},
		{"an unknown session", u.ID, kiln.NewID()},
	} {
		_, err := s.SetSessionOrganization(ctx, tc.userID, tc.sessionID, kiln.NewID())
		wantCode(t, err, kiln.ENotFound, "switch "+tc.name)
		wantCode(t, s.DeleteSession(ctx, tc.userID, tc.sessionID), kiln.ENotFound, "delete "+tc.name)
	}
	for _, sess := range []*kiln.Session{mine, others} {
		got, err := s.GetSessionByHash(ctx, sess.Hash)
		wantOK(t, err, "get a session refused changes")
		wantEqual(t, "session after refused changes", got, sess)
	}

	wantOK(t, s.DeleteSession(ctx, u.ID, mine.ID), "delete")
	_, err = s.GetSessionByHash(ctx, mine.Hash)
	wantCode(t, err, kiln.ENotFound, "get a deleted session")
	wantCode(t, s.DeleteSession(ctx, u.ID, mine.ID), kiln.ENotFound, "delete again")
	_, err = s.SetSessionOrganization(ctx, u.ID, mine.ID, orgID)
	wantCode(t, err, kiln.ENotFound, "switch a deleted session")
	list, err := s.ListSessions(ctx, u.ID, now())
	wantOK(t, err, "list after delete")
	wantEqual(t, "sessions after delete", list, []*kiln.Session(nil))
	// Its hash is free again.
	reuse := newSession(u.ID, now())
	reuse.Hash = mine.Hash
	wantOK(t, s.CreateSession(ctx, reuse), "create with a deleted session's hash")
}
