package agentpool

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

func openStore(t testing.TB) *sqlitestore.Store {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// pendingBuild stores a pending build of org in pool, created at.
func pendingBuild(t testing.TB, st *sqlitestore.Store, org, pool string, at time.Time) *kiln.Build {
	t.Helper()
	var gen kiln.IDGenerator
	b := &kiln.Build{ID: gen.New(at), OrganizationID: org, ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
		Status: kiln.StatusPending, Platform: kiln.PlatformWin64, BuildType: kiln.BuildTypeShipping, Branch: "main",
		UEVersion: "5.4", AgentPool: pool, TriggeredBy: "cron", CreatedAt: at.UTC().Truncate(time.Millisecond)}
	if err := st.CreateBuild(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

// newOrg creates an organization (an agent belongs to one that exists) and returns its id.
func newOrg(t testing.TB, st *sqlitestore.Store) string {
	t.Helper()
	org, _ := storefixture.Org(t, st, "", time.Now())
	return org.ID
}

func newAgent(t testing.TB, st *sqlitestore.Store, org, pool string) (string, *kiln.Agent) {
	t.Helper()
	secret, a := auth.NewAgent(org, "box", pool, time.Now())
	if err := st.CreateAgent(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return secret, a
}

// TestRevokeFailsTheAgentsBuildsOnly: revoking an agent fails the builds it holds, and no
// other: not another agent's of the same organization, not a pending one.
func TestRevokeFailsTheAgentsBuildsOnly(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	lc := &builds.Lifecycle{Builds: st, Projects: st}
	org := newOrg(t, st)
	_, a := newAgent(t, st, org, "p")
	_, b := newAgent(t, st, org, "p")
	now := time.Now()
	held := pendingBuild(t, st, org, "p", now.Add(-3*time.Second))
	other := pendingBuild(t, st, org, "p", now.Add(-2*time.Second))
	waiting := pendingBuild(t, st, org, "p", now.Add(-time.Second))
	for _, c := range []struct {
		b     *kiln.Build
		agent *kiln.Agent
	}{{held, a}, {other, b}} {
		if _, err := lc.ClaimHost(ctx, org, c.b.ID, kiln.AgentHost(c.agent.ID), "hash", time.Second); err != nil {
			t.Fatal(err)
		}
	}

	got, err := Revoke(ctx, st, lc, org, a.ID, now, discard())
	if err != nil || got.RevokedAt == nil {
		t.Fatalf("Revoke: %v %v", got, err)
	}
	want := map[string]kiln.BuildStatus{held.ID: kiln.StatusFailed, other.ID: kiln.StatusRunning, waiting.ID: kiln.StatusPending}
	for id, status := range want {
		b, err := st.GetBuild(ctx, org, id)
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != status {
			t.Errorf("build %s is %s, want %s", id, b.Status, status)
		}
		if status == kiln.StatusFailed && b.FailureReason != ReasonRevoked {
			t.Errorf("failure reason %q, want %q", b.FailureReason, ReasonRevoked)
		}
	}
	if _, err := Revoke(ctx, st, lc, kiln.NewID(), b.ID, now, discard()); !kiln.IsCode(err, kiln.ENotFound) {
		t.Errorf("revoke from another organization: %v, want not_found", err)
	}
}
