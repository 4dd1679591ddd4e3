package builds

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestShutdownWithLogFollowers stops the service while one build runs and another waits, each
// with a log follower connected. The followers do not hold the shutdown for its grace period
// (it used to wait the whole 20 s for them, then close the database under the workers), and the
// running build is failed as interrupted before the database closes.
func TestShutdownWithLogFollowers(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.Workers = 1 })
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	slow := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	other := w.AddSetting(t, pid, map[string]any{"branch": "main"})["id"].(string)
	running := w.Trigger(t, pid, slow, "")
	w.WaitStatus(t, running, "running")
	pending := w.Trigger(t, pid, other, "")
	w.WaitStatus(t, pending, "pending")
	followers := map[string]io.ReadCloser{}
	for _, id := range []string{running, pending} {
		resp := w.Follow(t, id, w.Token)
		if resp.StatusCode != 200 {
			t.Fatalf("follow %s: %d", id, resp.StatusCode)
		}
		followers[id] = resp.Body
	}

	start := time.Now()
	if err := w.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	// A generous margin under the 20 s grace: a follower must not hold the shutdown.
	if took := time.Since(start); took >= 10*time.Second {
		t.Fatalf("shutdown took %s with log followers connected", took)
	}
	for id, body := range followers {
		if _, err := io.ReadAll(body); err != nil && !strings.Contains(err.Error(), "closed") {
			t.Errorf("follower of %s: %v", id, err)
		}
	}

	local, err := serve.OpenLocal(context.Background(), w.Config.Data)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	for id, want := range map[string]struct {
		status kiln.BuildStatus
		reason string
	}{running: {kiln.StatusFailed, builds.ReasonInterrupted}, pending: {kiln.StatusPending, ""}} {
		b, err := local.Store.GetBuild(context.Background(), w.OrgID, id)
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != want.status || b.FailureReason != want.reason {
			t.Errorf("build %s after shutdown: %s %q, want %s %q", id, b.Status, b.FailureReason, want.status, want.reason)
		}
	}
	if logs := w.Logs.String(); strings.Contains(logs, "database is closed") {
		t.Errorf("something wrote after the database closed:\n%s", logs)
	}
}
