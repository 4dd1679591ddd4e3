package agents

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestFits(t *testing.T) {
	agent := &kiln.Agent{ID: "a", OrganizationID: "org", Pool: "win"}
	offer := Offer{Platforms: []kiln.Platform{kiln.PlatformWin64}, EngineVersions: []string{"5.4"}}
	build := func(edit func(b *kiln.Build)) *kiln.Build {
		b := &kiln.Build{OrganizationID: "org", AgentPool: "win", Status: kiln.StatusPending, Platform: kiln.PlatformWin64, UEVersion: "5.4"}
		if edit != nil {
			edit(b)
		}
		return b
	}
	tests := []struct {
		name string
		b    *kiln.Build
		want bool
	}{
		{"its pool, platform and engine", build(nil), true},
		{"a patch version of an offered engine", build(func(b *kiln.Build) { b.UEVersion = "5.4.2" }), true},
		{"another organization's", build(func(b *kiln.Build) { b.OrganizationID = "other" }), false},
		{"another pool's", build(func(b *kiln.Build) { b.AgentPool = "linux" }), false},
		{"no pool: the service's own hosts", build(func(b *kiln.Build) { b.AgentPool = "" }), false},
		{"a platform not offered", build(func(b *kiln.Build) { b.Platform = kiln.PlatformLinux }), false},
		{"an engine not offered", build(func(b *kiln.Build) { b.UEVersion = "5.3" }), false},
		{"running already", build(func(b *kiln.Build) { b.Status = kiln.StatusRunning }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fits(agent, offer, tt.b); got != tt.want {
				t.Fatalf("fits = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestClaim: a claim takes the oldest build it may, with a credential the build keeps the hash
// of; with nothing to take it waits until Notify tells of a new build; a revoked or unknown
// token is refused.
func TestClaim(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	lc := &builds.Lifecycle{Builds: st, Projects: st}
	d := &Dispatcher{Store: st, Lifecycle: lc, Logger: discard()}
	org := kiln.NewID()
	token, a := newAgent(t, st, org, "win")
	now := time.Now()
	pendingBuild(t, st, kiln.NewID(), "win", now.Add(-3*time.Second)) // another organization's, oldest
	older := pendingBuild(t, st, org, "win", now.Add(-2*time.Second))
	newer := pendingBuild(t, st, org, "win", now.Add(-time.Second))
	offer := Offer{Platforms: []kiln.Platform{kiln.PlatformWin64}, EngineVersions: []string{"5.4"}}

	got, err := d.Authenticate(ctx, token)
	if err != nil || got.ID != a.ID {
		t.Fatalf("Authenticate: %v %v", got, err)
	}
	if seen, _ := st.GetAgent(ctx, org, a.ID); seen.LastSeenAt == nil {
		t.Error("lastSeenAt not recorded")
	}
	for _, want := range []*kiln.Build{older, newer} {
		c, err := d.Claim(ctx, got, offer, 0)
		if err != nil || c == nil || c.Build.ID != want.ID {
			t.Fatalf("claim: %+v %v, want build %s", c, err, want.ID)
		}
		if c.Build.Status != kiln.StatusRunning || c.Build.Host != kiln.AgentHost(a.ID) || !hostcred.Matches(c.Credential, c.Build.HostCredentialHash) {
			t.Fatalf("claimed build: %+v", c.Build)
		}
	}
	if c, err := d.Claim(ctx, got, offer, 0); c != nil || err != nil {
		t.Fatalf("claim of nothing: %+v %v", c, err)
	}

	done := make(chan *Claimed)
	go func() { c, _ := d.Claim(ctx, got, offer, MaxWait); done <- c }()
	time.Sleep(50 * time.Millisecond) // let it wait; it finds the build either way
	late := pendingBuild(t, st, org, "win", time.Now())
	d.Notify()
	select {
	case c := <-done:
		if c == nil || c.Build.ID != late.ID {
			t.Fatalf("woken claim: %+v", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Notify did not wake the waiting claim")
	}

	if _, err := Revoke(ctx, st, lc, org, a.ID, time.Now(), discard()); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{token, "", "kagent_short", "kiln_" + token[len("kagent_"):]} {
		if _, err := d.Authenticate(ctx, tok); !kiln.IsCode(err, kiln.EInvalidToken) {
			t.Errorf("Authenticate(%q): %v, want invalid_token", tok, err)
		}
	}
}
