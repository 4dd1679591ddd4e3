package github

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestSignInURL(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	got, err := f.c.SignInURL("signed.state/value", "https://kiln.example/auth/github/callback")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if base := strings.TrimSuffix(got, "?"+u.RawQuery); base != f.gh.WebURL()+"login/oauth/authorize" ||
		q.Get("client_id") != f.gh.ClientID || q.Get("state") != "signed.state/value" ||
		q.Get("redirect_uri") != "https://kiln.example/auth/github/callback" || len(q) != 3 {
		t.Fatalf("sign-in URL %s", got)
	}
	if _, err := f.c.SignInURL("s", "/auth/github/callback"); err == nil {
		t.Fatal("a relative redirect URI was accepted")
	}
	noClient := newClient(t, f.gh, f.clock.Now)
	noClient.cfg.ClientID, noClient.cfg.ClientSecret = "", ""
	if _, err := noClient.SignInURL("s", "https://kiln.example/cb"); err == nil {
		t.Fatal("a client without an OAuth client made a sign-in URL")
	}
}

func TestSignInFlow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	var emails []githubtest.Email
	for i := range 120 { // the primary email on the second page
		emails = append(emails, githubtest.Email{Address: fmt.Sprintf("old%d@example.com", i), Verified: true})
	}
	emails = append(emails, githubtest.Email{Address: "octo@example.com", Primary: true, Verified: true})
	id := f.gh.AddUser(githubtest.User{Login: "octo-dev", Name: "Octo Dev", Emails: emails})
	f.gh.AddUser(githubtest.User{Login: "nameless", Emails: []githubtest.Email{{Address: "n@example.com", Primary: true, Verified: true}}})
	f.gh.AddUser(githubtest.User{Login: "unverified", Emails: []githubtest.Email{
		{Address: "u@example.com", Primary: true}, {Address: "v@example.com", Verified: true}}})
	f.gh.AddUser(githubtest.User{Login: "no-email"})

	signIn := func(login string) (*SignedInUser, error) {
		t.Helper()
		tok, err := f.c.ExchangeCode(ctx, f.gh.SignInCode(login))
		if err != nil {
			t.Fatalf("exchange %s's code: %v", login, err)
		}
		return f.c.SignedInUser(ctx, tok)
	}
	u, err := signIn("octo-dev")
	if err != nil || *u != (SignedInUser{ID: id, Login: "octo-dev", Name: "Octo Dev", Email: "octo@example.com"}) {
		t.Fatalf("signed in as %+v, %v", u, err)
	}
	if n := f.gh.Requests(githubtest.RouteUserEmails); n != 2 {
		t.Fatalf("%d email list requests, want 2 pages", n)
	}
	if u, err = signIn("nameless"); err != nil || u.Name != "nameless" {
		t.Fatalf("a user without a name: %+v, %v; want the login as name", u, err)
	}
	for _, login := range []string{"unverified", "no-email"} {
		u, err := signIn(login)
		var ke *kiln.Error
		if !errorsAs(err, &ke) || ke.Code != kiln.EValidation || ke.Fields["email"] == "" ||
			!strings.Contains(ke.Message, "verified primary email") {
			t.Errorf("%s: %+v, %v; want validation_failed on email", login, u, err)
		}
	}

	_, err = f.c.SignedInUser(ctx, "ghu_unknown")
	var ke *kiln.Error
	if !errorsAs(err, &ke) || ke.Code != kiln.EValidation || ke.Fields["code"] == "" {
		t.Fatalf("unknown token: %v, want validation_failed on code", err)
	}
}

func TestSignedInUserFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.gh.AddUser(githubtest.User{Login: "octo-dev", Emails: []githubtest.Email{{Address: "o@example.com", Primary: true, Verified: true}}})
	tok, err := f.c.ExchangeCode(ctx, f.gh.SignInCode("octo-dev"))
	if err != nil {
		t.Fatal(err)
	}

	// An App without the "Email addresses" permission: GitHub answers 403; the error says why.
	f.gh.Fail(githubtest.RouteUserEmails, 403)
	_, err = f.c.SignedInUser(ctx, tok)
	if kiln.ErrorCode(err) != kiln.EInternal || !strings.Contains(err.Error(), `"Email addresses"`) || strings.Contains(err.Error(), tok) {
		t.Fatalf("emails refused: %v, want an internal error naming the permission", err)
	}
	f.gh.Fail(githubtest.RouteUserEmails, 0)

	f.gh.Fail(githubtest.RouteUser, 502)
	_, err = f.c.SignedInUser(ctx, tok)
	wantCode(t, err, EGitHubUnavailable)
	f.gh.Fail(githubtest.RouteUser, 0)

	if _, err := f.c.ExchangeCode(ctx, "not-a-code"); err == nil {
		t.Fatal("a bad code was exchanged")
	} else if ke := (*kiln.Error)(nil); !errorsAs(err, &ke) || !strings.Contains(ke.Fields["code"], "sign in") {
		t.Fatalf("bad code: %v, want a problem on code that mentions signing in", err)
	}
}
