package github

import (
	"context"
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestAccountOf: the account of an installer's token is read from GET /user alone (no email
// permission needed); a token GitHub refuses is a problem on code, GitHub down is unavailable.
func TestAccountOf(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.gh.AddInstallation(7, "studio")
	id := f.gh.AddUser(githubtest.User{Login: "octo-dev", Name: "Octo Dev"})
	nameless := f.gh.AddUser(githubtest.User{Login: "nameless"})
	f.gh.AuthorizeUser("anonymous", "gho_anonymous", 7)
	token := func(code string) string {
		t.Helper()
		tok, err := f.c.ExchangeCode(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for _, tc := range []struct {
		name, token string
		want        Account
		code        string
	}{
		{"an installer", token(f.gh.InstallCode("octo-dev", 7)), Account{ID: id, Login: "octo-dev", Name: "Octo Dev"}, ""},
		{"no name: the login", token(f.gh.InstallCode("nameless", 7)), Account{ID: nameless, Login: "nameless", Name: "nameless"}, ""},
		{"a token GitHub refuses", token("anonymous"), Account{}, kiln.EValidation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := f.c.AccountOf(ctx, tc.token)
			if tc.code != "" {
				wantCode(t, err, tc.code)
				return
			}
			if err != nil || *a != tc.want {
				t.Fatalf("AccountOf = %+v, %v; want %+v", a, err, tc.want)
			}
		})
	}
	if n := f.gh.Requests(githubtest.RouteUserEmails); n != 0 {
		t.Errorf("%d email list requests, want none", n)
	}
	f.gh.Fail(githubtest.RouteUser, 502)
	_, err := f.c.AccountOf(ctx, token(f.gh.InstallCode("octo-dev", 7)))
	wantCode(t, err, EGitHubUnavailable)
}
