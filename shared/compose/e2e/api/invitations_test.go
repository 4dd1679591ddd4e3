package api

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestInvitations: an owner or admin invites a person by email with a role and gets the link
// once; the person accepts it with their name, without a token, and gets a member's first token
// that acts with the invited role. A link works once (of two accepts at once, one wins), a
// revoked or expired one is refused with the same answer, members and viewers cannot invite, an
// admin cannot invite an owner, and a member's email cannot be invited. It runs on kiln serve and,
// on aws-local.
func TestInvitations(t *testing.T) { e2e.Both(t, invitations) }

func invitations(t *testing.T, dep e2e.Deployment) {
	ts := e2e.StartService(t, dep, e2e.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	orgID := e2e.OrgOf(t, ts)
	admin := e2e.AddUser(t, ts, orgID, "admin")
	member := e2e.AddUser(t, ts, orgID, "member")
	other := e2e.BootstrapOrg(t, ts, "Elsewhere")
	path := "/organizations/" + orgID + "/invitations"
	invite := func(token, email, role string) e2e.Response {
		t.Helper()
		return ts.Do(t, "POST", path, token, map[string]any{"email": email, "role": role})
	}
	accept := func(secret, name string) e2e.Response {
		t.Helper()
		return ts.Do(t, "POST", "/invitations/accept", "", map[string]any{"secret": secret, "name": name})
	}
	secretOf := func(r e2e.Response) string {
		t.Helper()
		link := e2e.Field(t, r.Body, "link")
		base, secret, ok := strings.Cut(link, "#")
		if !ok || !strings.HasSuffix(base, "/console/invitations/accept") || !auth.WellFormedInvitation(secret) {
			t.Fatalf("link %q", link)
		}
		return secret
	}

	// Who may invite whom; bad input changes nothing.
	e2e.WantError(t, invite(member, "x@example.com", "viewer"), 403, "insufficient_scope")
	e2e.WantError(t, invite(admin, "boss@example.com", "owner"), 403, "insufficient_scope")
	e2e.WantError(t, invite(admin, "not an email", "member"), 400, "validation_failed")
	e2e.WantError(t, invite(admin, "x@example.com", "boss"), 400, "validation_failed")
	e2e.WantError(t, ts.Do(t, "POST", "/organizations/"+other.OrgID+"/invitations", admin, map[string]any{"email": "x@example.com", "role": "member"}), 404, "not_found")
	e2e.WantError(t, ts.Do(t, "GET", path, member, nil), 403, "insufficient_scope")
	ownerEmail := e2e.Field(t, ts.Do(t, "GET", "/auth/me", ts.Token, nil).Body, "user", "email")
	e2e.WantError(t, invite(admin, strings.ToUpper(ownerEmail), "member"), 409, "conflict")
	if r := ts.Do(t, "GET", path, admin, nil); len(e2e.Items(t, r)) != 0 {
		t.Fatalf("invitations after refused ones: %s", r.Raw)
	}

	// An admin invites a member; the link is shown once and not mailed (no mail configured).
	r := invite(admin, "Ada@Example.com", "member")
	if r.Status != http.StatusCreated || e2e.Field(t, r.Body, "email") != "Ada@Example.com" || e2e.Field(t, r.Body, "role") != "member" ||
		e2e.Field(t, r.Body, "invitedBy", "name") != "User" || r.Body["mailed"] != false {
		t.Fatalf("admin invites: %d %s", r.Status, r.Raw)
	}
	secret, invID := secretOf(r), e2e.Field(t, r.Body, "id")
	created, _ := time.Parse(time.RFC3339, e2e.Field(t, r.Body, "createdAt"))
	expires, _ := time.Parse(time.RFC3339, e2e.Field(t, r.Body, "expiresAt"))
	if d := expires.Sub(created); d != 7*24*time.Hour {
		t.Fatalf("valid for %v, want 7 days", d)
	}
	// The accept page's preview names what the invitation is, by its secret alone; a wrong
	// secret is not_found.
	if p := ts.Do(t, "POST", "/invitations/preview", "", map[string]any{"secret": secret}); p.Status != http.StatusOK ||
		e2e.Field(t, p.Body, "email") != "Ada@Example.com" || e2e.Field(t, p.Body, "role") != "member" || strings.Contains(p.Raw, secret) {
		t.Fatalf("preview: %d %s", p.Status, p.Raw)
	}
	e2e.WantError(t, ts.Do(t, "POST", "/invitations/preview", "", map[string]any{"secret": secret[:len(secret)-1] + "x"}), 404, "not_found")
	list := ts.Do(t, "GET", path, ts.Token, nil)
	if got := e2e.Items(t, list); len(got) != 1 || got[0]["id"] != invID || got[0]["link"] != nil || strings.Contains(list.Raw, secret) {
		t.Fatalf("pending invitations: %s", list.Raw)
	}

	// Accepting needs a name; a malformed secret gets the same answer as a used one.
	e2e.WantError(t, accept(secret, " "), 400, "validation_failed")
	e2e.WantError(t, accept("kinv_nope", "Ada"), 404, "not_found")
	var wg sync.WaitGroup
	answers := make([]e2e.Response, 2)
	for i := range answers {
		wg.Go(func() { answers[i] = accept(secret, "Ada Lovelace") })
	}
	wg.Wait()
	var won e2e.Response
	for _, a := range answers {
		switch a.Status {
		case http.StatusCreated:
			if won.Status != 0 {
				t.Fatalf("both accepts won: %s / %s", answers[0].Raw, answers[1].Raw)
			}
			won = a
		case http.StatusNotFound:
		default:
			t.Fatalf("accept: %d %s", a.Status, a.Raw)
		}
	}
	if won.Status == 0 || e2e.Field(t, won.Body, "user", "email") != "Ada@Example.com" || e2e.Field(t, won.Body, "user", "name") != "Ada Lovelace" ||
		e2e.Field(t, won.Body, "organization", "id") != orgID || e2e.Field(t, won.Body, "membership", "role") != "member" {
		t.Fatalf("accepted: %s / %s", answers[0].Raw, answers[1].Raw)
	}
	ada := e2e.Field(t, won.Body, "token")
	me := ts.Do(t, "GET", "/auth/me", ada, nil)
	if e2e.Field(t, me.Body, "membership", "role") != "member" || e2e.Field(t, me.Body, "organization", "id") != orgID {
		t.Fatalf("the new member's token: %s", me.Raw)
	}
	e2e.WantError(t, ts.Do(t, "GET", path, ada, nil), 403, "insufficient_scope") // a member, not an admin
	used := accept(secret, "Ada Again")
	e2e.WantError(t, used, 404, "not_found")
	if r := ts.Do(t, "GET", path, admin, nil); len(e2e.Items(t, r)) != 0 {
		t.Fatalf("invitations after the accept: %s", r.Raw)
	}
	e2e.WantError(t, invite(admin, "ada@example.com", "viewer"), 409, "conflict") // a member now

	// A revoked link is refused with the same answer; revoking again is 404.
	r = invite(ts.Token, "grace@example.com", "owner")
	if r.Status != http.StatusCreated {
		t.Fatalf("owner invites an owner: %d %s", r.Status, r.Raw)
	}
	revoked := secretOf(r)
	e2e.WantError(t, ts.Do(t, "DELETE", path+"/"+e2e.Field(t, r.Body, "id"), member, nil), 403, "insufficient_scope")
	e2e.WantError(t, ts.Do(t, "DELETE", "/organizations/"+other.OrgID+"/invitations/"+e2e.Field(t, r.Body, "id"), other.Token, nil), 404, "not_found")
	if d := ts.Do(t, "DELETE", path+"/"+e2e.Field(t, r.Body, "id"), admin, nil); d.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", d.Status, d.Raw)
	}
	e2e.WantError(t, ts.Do(t, "DELETE", path+"/"+e2e.Field(t, r.Body, "id"), admin, nil), 404, "not_found")
	gone := accept(revoked, "Grace")
	e2e.WantError(t, gone, 404, "not_found")

	// Inviting an email again replaces its pending invitation: the first link stops working.
	first := secretOf(invite(admin, "lin@example.com", "viewer"))
	second := secretOf(invite(admin, "lin@example.com", "admin"))
	e2e.WantError(t, accept(first, "Lin"), 404, "not_found")
	if r := accept(second, "Lin"); r.Status != http.StatusCreated || e2e.Field(t, r.Body, "membership", "role") != "admin" {
		t.Fatalf("accept the replacement: %d %s", r.Status, r.Raw)
	}

	// An invitation made eight days ago has expired: refused alike, and listed until revoked.
	st := e2e.StoreOf(t, ts)
	oldSecret, old := auth.NewInvitation(orgID, "late@example.com", kiln.RoleViewer, kiln.User{ID: kiln.NewID(), Name: "Someone"}, time.Now().Add(-8*24*time.Hour))
	if err := st.CreateInvitation(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	expired := accept(oldSecret, "Late")
	e2e.WantError(t, expired, 404, "not_found")
	if got := e2e.Items(t, ts.Do(t, "GET", path, admin, nil)); len(got) != 1 || got[0]["id"] != old.ID {
		t.Fatalf("listed: %v", got)
	}
	for _, r := range []e2e.Response{used, gone, expired} {
		if r.Body["message"] != used.Body["message"] {
			t.Fatalf("the answers tell used, revoked and expired links apart: %q, %q, %q", used.Body["message"], gone.Body["message"], expired.Body["message"])
		}
	}
}

// TestInvitationIsMailed: with a mail server configured the link is mailed to the invited
// person, and the answer says so; the mailed link accepts.
func TestInvitationIsMailed(t *testing.T) {
	t.Parallel()
	box := e2e.NewMailbox(t)
	cfg := e2e.NewConfig(t, filepath.Join(t.TempDir(), "data"))
	cfg.SMTPURL, cfg.SMTPFrom = "smtp://"+box.Addr, "kiln <kiln@studio.example>"
	ts := e2e.StartService(t, e2e.Serve, cfg)
	r := ts.Do(t, "POST", "/organizations/"+e2e.OrgOf(t, ts)+"/invitations", ts.Token, map[string]any{"email": "ada@studio.example", "role": "viewer"})
	if r.Status != http.StatusCreated || r.Body["mailed"] != true {
		t.Fatalf("invite: %d %s", r.Status, r.Raw)
	}
	mail := box.Messages()
	if len(mail) != 1 || !strings.HasPrefix(mail[0], "ada@studio.example\n") || !strings.Contains(mail[0], e2e.Field(t, r.Body, "link")) ||
		!strings.Contains(mail[0], "Subject: [kiln] Invitation to Local") {
		t.Fatalf("mail: %q", mail)
	}
	_, secret, _ := strings.Cut(e2e.Field(t, r.Body, "link"), "#")
	if a := ts.Do(t, "POST", "/invitations/accept", "", map[string]any{"secret": secret, "name": "Ada"}); a.Status != http.StatusCreated {
		t.Fatalf("accept the mailed link: %d %s", a.Status, a.Raw)
	}
}

// TestAcceptIsRateLimitedPerAddress: accepting needs no token, so every attempt takes from the
// client address's budget, as a failed sign-in does: guessing secrets is slow.
func TestAcceptIsRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	cfg := e2e.NewConfig(t, filepath.Join(t.TempDir(), "data"))
	cfg.RateLimit = 0.5 // a burst of 2, then one request every 2 s
	ts := e2e.StartService(t, e2e.Serve, cfg)
	guess := func() e2e.Response {
		return ts.Do(t, "POST", "/invitations/accept", "", map[string]any{"secret": "kinv_" + strings.Repeat("a", 40), "name": "Eve"})
	}
	e2e.WantError(t, guess(), 404, "not_found")
	e2e.WantError(t, guess(), 404, "not_found")
	last := guess()
	e2e.WantError(t, last, 429, "rate_limited")
	if last.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}
