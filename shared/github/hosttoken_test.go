package github

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestHostTokenIsNewEachTimeAndNotTheServicesOwn: every build host gets its own token, with its
// expiry; the service's cached token is neither handed out nor replaced.
func TestHostTokenIsNewEachTimeAndNotTheServicesOwn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.gh.AddRepo(studio, "studio/shooter", true, "main")
	ctx := context.Background()
	own, err := f.c.InstallationToken(ctx, studio)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{own: true}
	for range 2 {
		tok, exp, err := f.c.HostToken(ctx, studio, "studio/shooter")
		if err != nil {
			t.Fatal(err)
		}
		if seen[tok] {
			t.Fatalf("HostToken handed out a token already given")
		}
		seen[tok] = true
		if now := f.clock.Now(); !exp.After(now) || exp.After(now.Add(time.Hour+time.Minute)) {
			t.Errorf("expires %v: want within the hour after %v", exp, now)
		}
	}
	if again, _ := f.c.InstallationToken(ctx, studio); again != own {
		t.Error("minting a host token replaced the service's cached token")
	}
	before := f.gh.Requests(githubtest.RouteAccessToken)
	if _, _, err := f.c.HostToken(ctx, 999, "studio/shooter"); !kiln.IsCode(err, kiln.EGitHubInstallationInvalid) {
		t.Errorf("unknown installation: %v, want %s", err, kiln.EGitHubInstallationInvalid)
	}
	if _, _, err := f.c.HostToken(ctx, studio, "not-a-full-name"); err == nil || f.gh.Requests(githubtest.RouteAccessToken) != before+1 {
		t.Errorf("a malformed repository name: %v, and it reached GitHub", err)
	}
}
