package agentpool

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestFits(t *testing.T) {
	agent := &kiln.Agent{Credential: kiln.Credential{ID: "a", OrganizationID: "org"}, Pool: "win"}
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
	hosted := &kiln.Agent{Credential: kiln.Credential{ID: "i-0abc"}, Pool: kiln.HostedPoolWin64, Hosted: true}
	hostedBuild := func(edit func(b *kiln.Build)) *kiln.Build {
		return build(func(b *kiln.Build) {
			b.AgentPool = kiln.HostedPoolWin64
			if edit != nil {
				edit(b)
			}
		})
	}
	for _, tt := range []struct {
		name string
		a    *kiln.Agent
		b    *kiln.Build
		want bool
	}{
		{"a hosted host takes a hosted build of any organization", hosted, hostedBuild(func(b *kiln.Build) { b.OrganizationID = "other" }), true},
		{"a hosted host takes no organization's pool", hosted, build(nil), false},
		{"a hosted host takes no build without a pool", hosted, hostedBuild(func(b *kiln.Build) { b.AgentPool = "" }), false},
		// An organization's agent whose pool is a reserved name (none can be made, but a record
		// from before the rule) never takes hosted builds, even of its own organization.
		{"an agent named like the hosted pool", &kiln.Agent{Credential: kiln.Credential{ID: "a", OrganizationID: "org"}, Pool: kiln.HostedPoolWin64}, hostedBuild(nil), false},
		{"a hosted host in an organization's pool", &kiln.Agent{Credential: kiln.Credential{ID: "i-1", OrganizationID: "org"}, Pool: "win", Hosted: true}, build(nil), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fits(tt.a, offer, tt.b); got != tt.want {
				t.Fatalf("fits = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestHostedClaim: one of kiln's hosts claims the oldest hosted build of any organization, held
// as "ec2:<instance>", and records the claim; a second claim by the same instance is refused
// and takes nothing; without the record store it claims nothing.
func TestHostedClaim(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	lc := &builds.Lifecycle{Builds: st, Projects: st}
	d := &Dispatcher{Store: st, Lifecycle: lc, Hosted: st, Logger: discard()}
	now := time.Now()
	orgA, orgB := kiln.NewID(), kiln.NewID()
	pendingBuild(t, st, orgA, "win", now.Add(-4*time.Second)) // an organization's pool
	first := pendingBuild(t, st, orgB, kiln.HostedPoolWin64, now.Add(-3*time.Second))
	second := pendingBuild(t, st, orgA, kiln.HostedPoolWin64, now.Add(-2*time.Second))
	offer := Offer{Platforms: []kiln.Platform{kiln.PlatformWin64}, EngineVersions: []string{"5.4"}}
	host := &kiln.Agent{Credential: kiln.Credential{ID: "i-0aaa"}, Pool: kiln.HostedPoolWin64, Hosted: true}

	if c, err := (&Dispatcher{Store: st, Lifecycle: lc, Logger: discard()}).Claim(ctx, host, offer, 0); c != nil || !kiln.IsCode(err, kiln.EInsufficientScope) {
		t.Fatalf("claim without hosted hosts: %+v %v", c, err)
	}
	c, err := d.Claim(ctx, host, offer, 0)
	if err != nil || c == nil || c.Build.ID != first.ID || c.Build.Host != "ec2:i-0aaa" || !hostcred.Matches(c.Credential, c.Build.HostCredentialHash) {
		t.Fatalf("hosted claim: %+v %v, want build %s", c, err, first.ID)
	}
	rec, err := st.GetHostedHost(ctx, host.ID)
	if err != nil || !rec.Claimed() || rec.BuildID != first.ID || rec.OrganizationID != orgB {
		t.Fatalf("hosted host record: %+v %v", rec, err)
	}
	if c, err := d.Claim(ctx, host, offer, 0); c != nil || err != ErrHostClaimed {
		t.Fatalf("second claim of the instance: %+v %v", c, err)
	}
	if b, _ := st.GetBuild(ctx, orgA, second.ID); b.Status != kiln.StatusPending || b.Host != "" {
		t.Fatalf("the refused second claim changed a build: %s %q", b.Status, b.Host)
	}

	// Two claims of one instance at once: the one whose record comes second fails the build it
	// had claimed, and hands out nothing.
	racing := &Dispatcher{Store: st, Lifecycle: lc, Hosted: recordedMeanwhile{st}, Logger: discard()}
	if c, err := racing.Claim(ctx, &kiln.Agent{Credential: kiln.Credential{ID: "i-0ccc"}, Pool: kiln.HostedPoolWin64, Hosted: true}, offer, 0); c != nil || err != ErrHostClaimed {
		t.Fatalf("claim whose record lost a race: %+v %v", c, err)
	}
	if b, _ := st.GetBuild(ctx, orgA, second.ID); b.Status != kiln.StatusFailed || b.Host != "ec2:i-0ccc" {
		t.Fatalf("the build of the claim that lost its record's race: %s %q", b.Status, b.Host)
	}

	other := &kiln.Agent{Credential: kiln.Credential{ID: "i-0bbb"}, Pool: kiln.HostedPoolWin64, Hosted: true}
	third := pendingBuild(t, st, orgA, kiln.HostedPoolWin64, now.Add(-time.Second))
	if c, err := d.Claim(ctx, other, offer, 0); err != nil || c == nil || c.Build.ID != third.ID {
		t.Fatalf("another instance's claim: %+v %v", c, err)
	}
}

// recordedMeanwhile is a record store where another claim of the instance was recorded between
// the dispatcher's read and its record.
type recordedMeanwhile struct{ HostedClaims }

func (recordedMeanwhile) GetHostedHost(context.Context, string) (*kiln.HostedHost, error) {
	return nil, kiln.NotFound("hosted host")
}

func (r recordedMeanwhile) ClaimHostedHost(ctx context.Context, h *kiln.HostedHost) error {
	at := h.SeenAt
	if err := r.HostedClaims.ClaimHostedHost(ctx, &kiln.HostedHost{ID: h.ID, SeenAt: at, ClaimedAt: &at, OrganizationID: "x", BuildID: "y"}); err != nil {
		return err
	}
	return r.HostedClaims.ClaimHostedHost(ctx, h)
}

// TestClaim: a claim takes the oldest build it may, with a credential the build keeps the hash
// of; with nothing to take it waits until Notify tells of a new build; a revoked or unknown
// token is refused.
func TestClaim(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	lc := &builds.Lifecycle{Builds: st, Projects: st}
	d := &Dispatcher{Store: st, Lifecycle: lc, Logger: discard()}
	org := newOrg(t, st)
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
