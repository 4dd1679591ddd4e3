package auth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestNewTokenKeepsOnlyTheHash(t *testing.T) {
	now := time.Now()
	secret, tok := NewToken("org", "user", "ci", now, 24*time.Hour)
	if !WellFormed(secret) || !strings.HasPrefix(secret, "kiln_") || len(secret) != 45 {
		t.Fatalf("token %q is not well formed", secret)
	}
	if tok.Hash != HashToken(secret) || strings.Contains(tok.Hash, secret[5:]) || len(tok.Hash) != 64 {
		t.Fatalf("hash %q", tok.Hash)
	}
	if !strings.HasPrefix(secret, tok.Hint) || len(tok.Hint) >= len(secret)/2 {
		t.Fatalf("hint %q gives away too much", tok.Hint)
	}
	if tok.ExpiresAt == nil || !tok.Expired(now.Add(25*time.Hour)) || tok.Expired(now) {
		t.Fatal("expiry wrong")
	}
	other, _ := NewToken("org", "user", "ci", now, 0)
	if other == secret {
		t.Fatal("two tokens are the same")
	}
}

type fakeStore struct {
	tokens   map[string]*kiln.Token
	members  map[string]*kiln.Member
	orgs     map[string]*kiln.Organization
	sessions map[string]*kiln.Session
	users    map[string]*kiln.GitHubUser
}

func (f *fakeStore) GetSessionByHash(_ context.Context, h string) (*kiln.Session, error) {
	if s, ok := f.sessions[h]; ok {
		return s, nil
	}
	return nil, kiln.NotFound("session")
}

func (f *fakeStore) GetGitHubUser(_ context.Context, id string) (*kiln.GitHubUser, error) {
	if u, ok := f.users[id]; ok {
		return u, nil
	}
	return nil, kiln.NotFound("user")
}

func (f *fakeStore) GetTokenByHash(_ context.Context, h string) (*kiln.Token, error) {
	if t, ok := f.tokens[h]; ok {
		return t, nil
	}
	return nil, kiln.NotFound("token")
}

func (f *fakeStore) GetMember(_ context.Context, org, user string) (*kiln.Member, error) {
	if m, ok := f.members[org+"/"+user]; ok {
		return m, nil
	}
	return nil, kiln.NotFound("member")
}

func (f *fakeStore) GetOrganization(_ context.Context, id string) (*kiln.Organization, error) {
	if o, ok := f.orgs[id]; ok {
		return o, nil
	}
	return nil, kiln.NotFound("organization")
}

func TestResolve(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	good, tok := NewToken("o1", "u1", "a", now, 0)
	expired, etok := NewToken("o1", "u1", "b", now.Add(-48*time.Hour), time.Hour)
	orphan, otok := NewToken("o1", "gone", "c", now, 0)
	st := &fakeStore{
		tokens:  map[string]*kiln.Token{tok.Hash: tok, etok.Hash: etok, otok.Hash: otok},
		members: map[string]*kiln.Member{"o1/u1": {OrganizationID: "o1", Role: kiln.RoleViewer, User: kiln.User{ID: "u1"}}},
		orgs:    map[string]*kiln.Organization{"o1": {ID: "o1"}},
	}
	a := &Authenticator{Store: st, Now: func() time.Time { return now }}
	p, err := a.Resolve(context.Background(), good)
	if err != nil || p.Organization.ID != "o1" || p.Member.Role != kiln.RoleViewer || p.UserRef() != "user:u1" {
		t.Fatalf("resolve good: %+v %v", p, err)
	}
	if err := p.Require(kiln.ActWrite); !kiln.IsCode(err, kiln.EInsufficientScope) {
		t.Errorf("viewer may write: %v", err)
	}
	for name, secret := range map[string]string{"expired": expired, "member gone": orphan, "unknown": "kiln_" + strings.Repeat("x", 40), "malformed": "abc"} {
		if _, err := a.Resolve(context.Background(), secret); !kiln.IsCode(err, kiln.EInvalidToken) {
			t.Errorf("%s: %v, want invalid_token", name, err)
		}
	}
}

func TestResolveCachesUntilForgotten(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	secret, tok := NewToken("o1", "u1", "a", now, 0)
	st := &fakeStore{
		tokens:  map[string]*kiln.Token{tok.Hash: tok},
		members: map[string]*kiln.Member{"o1/u1": {OrganizationID: "o1", Role: kiln.RoleAdmin, User: kiln.User{ID: "u1"}}},
		orgs:    map[string]*kiln.Organization{"o1": {ID: "o1", Name: "Old"}},
	}
	clock := now
	a := &Authenticator{Store: st, Now: func() time.Time { return clock }, CacheTTL: 5 * time.Second}
	ctx := context.Background()
	if _, err := a.Resolve(ctx, secret); err != nil {
		t.Fatal(err)
	}
	st.orgs["o1"] = &kiln.Organization{ID: "o1", Name: "New"}
	if p, _ := a.Resolve(ctx, secret); p.Organization.Name != "Old" {
		t.Fatal("the second resolve within the TTL asked the store")
	}
	a.ForgetOrganization("o1")
	if p, _ := a.Resolve(ctx, secret); p.Organization.Name != "New" {
		t.Fatal("a forgotten organization is still cached")
	}
	delete(st.tokens, tok.Hash)
	if _, err := a.Resolve(ctx, secret); err != nil {
		t.Fatal("cached token refused within the TTL")
	}
	a.ForgetToken(tok.ID)
	if _, err := a.Resolve(ctx, secret); !kiln.IsCode(err, kiln.EInvalidToken) {
		t.Fatalf("forgotten revoked token: %v", err)
	}
	st.tokens[tok.Hash] = tok
	a.Resolve(ctx, secret)
	delete(st.tokens, tok.Hash)
	clock = clock.Add(6 * time.Second)
	if _, err := a.Resolve(ctx, secret); !kiln.IsCode(err, kiln.EInvalidToken) {
		t.Fatalf("revoked elsewhere, after the TTL: %v", err)
	}
}

func TestResolveSession(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	inOrg, s1 := NewSession("u1", "o1", "Firefox", "127.0.0.1", now)
	noOrg, s2 := NewSession("u1", "", "Firefox", "127.0.0.1", now)
	expired, s3 := NewSession("u1", "o1", "", "", now.Add(-kiln.SessionTTL-time.Second))
	removed, s4 := NewSession("u2", "o1", "", "", now)
	if !WellFormedSession(inOrg) || WellFormed(inOrg) || WellFormedSession(strings.Replace(inOrg, SessionPrefix, TokenPrefix, 1)) {
		t.Fatalf("a session secret %q is taken for a token or the other way round", inOrg)
	}
	st := &fakeStore{
		sessions: map[string]*kiln.Session{s1.Hash: s1, s2.Hash: s2, s3.Hash: s3, s4.Hash: s4},
		members:  map[string]*kiln.Member{"o1/u1": {OrganizationID: "o1", Role: kiln.RoleAdmin, User: kiln.User{ID: "u1"}}},
		orgs:     map[string]*kiln.Organization{"o1": {ID: "o1"}},
		users:    map[string]*kiln.GitHubUser{"u1": {User: kiln.User{ID: "u1", Name: "Ada"}, GitHubID: 7}},
	}
	a := &Authenticator{Store: st, Now: func() time.Time { return now }}
	p, err := a.Resolve(context.Background(), inOrg)
	if err != nil || p.Organization.ID != "o1" || p.Member.Role != kiln.RoleAdmin || p.Token != nil || p.Session.ID != s1.ID ||
		p.CredentialKey() != "session:"+s1.ID || p.Require(kiln.ActAdmin) != nil {
		t.Fatalf("session in an organization: %+v %v", p, err)
	}
	p, err = a.Resolve(context.Background(), noOrg)
	if err != nil || p.Organization != nil || p.Member.User.Name != "Ada" {
		t.Fatalf("session without an organization: %+v %v", p, err)
	}
	if err := p.Require(kiln.ActRead); !kiln.IsCode(err, kiln.EInsufficientScope) || !strings.Contains(err.Error(), "no organization") {
		t.Errorf("a session without an organization may read: %v", err)
	}
	// Sessions are never cached: one signed out elsewhere stops at once.
	cached := &Authenticator{Store: st, Now: func() time.Time { return now }, CacheTTL: time.Minute}
	if _, err := cached.Resolve(context.Background(), inOrg); err != nil {
		t.Fatal(err)
	}
	delete(st.sessions, s1.Hash)
	if _, err := cached.Resolve(context.Background(), inOrg); !kiln.IsCode(err, kiln.EInvalidToken) {
		t.Errorf("a session signed out elsewhere still resolves: %v", err)
	}
	for name, secret := range map[string]string{"expired": expired, "removed from its organization": removed,
		"unknown": SessionPrefix + strings.Repeat("x", 40)} {
		if _, err := a.Resolve(context.Background(), secret); !kiln.IsCode(err, kiln.EInvalidToken) {
			t.Errorf("%s: %v, want invalid_token", name, err)
		}
	}
}
