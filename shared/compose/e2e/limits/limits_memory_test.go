package limits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/sandbox/cgroup"
)

func TestBuildOverItsMemoryLimitFailsAndTheNextBuildRuns(t *testing.T) {
	t.Parallel()
	if m := cgroup.Open(nil); !m.Applies(cgroup.Memory) {
		t.Skipf("this host cannot apply a memory limit: %v", m.Unavailable())
	}
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.BuildMemory = 64 << 20 })
	pid := w.AddShooter(t)
	w.Shooter.Commit("hungry", "Load every asset at once", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_ALLOC_MB=256\n"})
	hungry := w.AddSetting(t, pid, map[string]any{"branch": "hungry"})["id"].(string)
	plain := w.AddSetting(t, pid, nil)["id"].(string)

	id := w.Trigger(t, pid, hungry, "")
	b := w.WaitEnded(t, id)
	want := "memory limit: the build used more than KILN_BUILD_MEMORY (64 MiB) and was stopped"
	if b["status"] != "failed" || b["failureReason"] != want {
		t.Fatalf("build over its memory: %v %q, want failed with %q\n%s", b["status"], b["failureReason"], want, w.LogText(t, id))
	}
	next := w.WaitEnded(t, w.Trigger(t, pid, plain, ""))
	if next["status"] != "complete" {
		t.Fatalf("the next build: %v %v", next["status"], next["failureReason"])
	}
	if !strings.Contains(w.Logs.String(), `"msg":"build limits","memory":"64 MiB"`) {
		t.Errorf("the start log does not say which limits apply:\n%s", w.Logs.String())
	}
}

func TestBuildDoesNotStartWithLessFreeThanTheDiskReserve(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.DiskReserve = serve.DiskReserve{Bytes: 1 << 60} })
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	b := w.WaitEnded(t, id)
	reason, _ := b["failureReason"].(string)
	if b["status"] != "failed" || !strings.HasPrefix(reason, "disk space: the data volume has ") ||
		!strings.HasSuffix(reason, " free, less than KILN_DISK_RESERVE (1024 PiB); the build did not start") {
		t.Fatalf("build with too little disk: %v %q", b["status"], reason)
	}
	// Nothing was checked out.
	if _, err := os.Stat(filepath.Join(w.Config.Data, "workspaces")); !os.IsNotExist(err) {
		t.Errorf("a workspace was made: %v", err)
	}
}
