package github

import (
	"context"
	"fmt"
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestInstallation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	in, err := f.c.Installation(context.Background(), studio)
	if err != nil {
		t.Fatal(err)
	}
	if in.ID != studio || in.Account != "studio" || in.AccountType != "Organization" || in.Suspended {
		t.Fatalf("installation %+v", in)
	}
	_, err = f.c.Installation(context.Background(), 999)
	wantCode(t, err, kiln.EGitHubInstallationInvalid)
}

func TestInstallURL(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for range 2 {
		u, err := f.c.InstallURL(context.Background(), "signed.state/value")
		if err != nil {
			t.Fatal(err)
		}
		if want := f.gh.WebURL() + "apps/kiln-test/installations/new?state=signed.state%2Fvalue"; u != want {
			t.Fatalf("install URL %s, want %s", u, want)
		}
	}
	if n := f.gh.Requests(githubtest.RouteApp); n != 1 {
		t.Fatalf("%d GET /app requests, want 1 (the slug is kept)", n)
	}
}

func TestOAuthInstallFlow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var many []int64
	for i := range 120 {
		id := int64(100 + i)
		f.gh.AddInstallation(id, fmt.Sprintf("acct%d", i))
		many = append(many, id)
	}
	f.gh.AuthorizeUser("code-1", "ghu_user1", studio)
	f.gh.AuthorizeUser("code-2", "ghu_user2", many...)
	ctx := context.Background()

	tok, err := f.c.ExchangeCode(ctx, "code-1")
	if err != nil || tok != "ghu_user1" {
		t.Fatalf("exchange: %q, %v", tok, err)
	}
	_, err = f.c.ExchangeCode(ctx, "code-1")
	wantCode(t, err, kiln.EValidation) // a code works once

	ids, err := f.c.UserInstallationIDs(ctx, tok)
	if err != nil || fmt.Sprint(ids) != fmt.Sprint([]int64{studio}) {
		t.Fatalf("user installations %v, %v", ids, err)
	}
	tok2, err := f.c.ExchangeCode(ctx, "code-2")
	if err != nil {
		t.Fatal(err)
	}
	ids, err = f.c.UserInstallationIDs(ctx, tok2)
	if err != nil || len(ids) != len(many) || ids[119] != many[119] {
		t.Fatalf("%d user installations, %v; want all %d pages", len(ids), err, len(many))
	}
	if n := f.gh.Requests(githubtest.RouteUserInstallations); n != 3 {
		t.Fatalf("%d user installation requests, want 1 + 2 pages", n)
	}
	_, err = f.c.UserInstallationIDs(ctx, "ghu_unknown")
	wantCode(t, err, kiln.EValidation)

	// A wrong client secret is the operator's mistake: an internal error, never the secret.
	bad := newClient(t, f.gh, f.clock.Now)
	bad.cfg.ClientSecret = "wrong-secret"
	f.gh.AuthorizeUser("code-3", "ghu_user3", studio)
	_, err = bad.ExchangeCode(ctx, "code-3")
	if err == nil || kiln.ErrorCode(err) != kiln.EInternal || containsAny(err.Error(), "wrong-secret", "ghu_") {
		t.Fatalf("wrong client secret: %v", err)
	}
}
