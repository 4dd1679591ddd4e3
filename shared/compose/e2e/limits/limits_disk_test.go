package limits

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/diskspace"
	"github.com/kilnbuild/kiln/shared/runner"
)

// TestBuildThatFillsTheDiskIsStoppedAndWhatItWroteRemoved: a hostile build script that takes
// the data volume past KILN_DISK_RESERVE in one fallocate is stopped with a reason naming how
// much free space fell while it ran; its workspace (and cache marker) and staging directory are
// removed, so free space is back above the reserve and the next build runs.
func TestBuildThatFillsTheDiskIsStoppedAndWhatItWroteRemoved(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("fallocate"); err != nil {
		t.Skip("no fallocate on this host")
	}
	space, err := diskspace.Of(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const margin, hog = 3 << 30, 6 << 30 // the build passes the reserve by 3 GiB
	if space.Free < 3*hog {
		t.Skipf("the test volume has %s free; the test takes %s for a moment", diskspace.Format(space.Free), diskspace.Format(hog))
	}
	reserve := space.Free - margin
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.DiskReserve = serve.DiskReserve{Bytes: reserve} })
	pid := w.AddShooter(t)
	w.Shooter.Commit("hog", "Fill the disk", "Mallory", map[string]string{
		"Shooter/FakeUAT.env": "fallocate -l 6GiB \"$projectdir/Saved.hog\"\nsleep 60\n",
	})
	hogSetting := w.AddSetting(t, pid, map[string]any{"branch": "hog"})["id"].(string)
	plain := w.AddSetting(t, pid, nil)["id"].(string)

	id := w.Trigger(t, pid, hogSetting, "")
	b := w.WaitEnded(t, id)
	reason, _ := b["failureReason"].(string)
	if b["status"] != "failed" || !strings.HasPrefix(reason, "disk space: the data volume's free space fell by ") ||
		!strings.HasSuffix(reason, "; the build was stopped and its workspace removed") {
		t.Fatalf("the hostile build: %v %q, want failed for disk space\n%s", b["status"], reason, w.LogText(t, id))
	}
	workspace := filepath.Join(w.Config.Data, "workspaces", w.OrgID, pid, runner.WorkspaceKey("hog"))
	for _, p := range []string{workspace, workspace + ".cache", filepath.Join(w.Config.Data, "staging", id)} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left: %v", p, err)
		}
	}
	if s, err := diskspace.Of(w.Config.Data); err != nil || s.Free < reserve {
		t.Errorf("the data volume has %s free after the stop, want at least the reserve %s (%v)", diskspace.Format(s.Free), diskspace.Format(reserve), err)
	}
	if !strings.Contains(w.Logs.String(), `"msg":"removed the workspace and staging of a build stopped for disk space"`) {
		t.Errorf("the service's log does not say what it freed:\n%s", w.Logs.String())
	}
	if next := w.WaitEnded(t, w.Trigger(t, pid, plain, "")); next["status"] != "complete" {
		t.Fatalf("the next build: %v %v", next["status"], next["failureReason"])
	}
}
