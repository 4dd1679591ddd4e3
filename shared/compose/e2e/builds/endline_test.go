package builds

import (
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestTheLogSaysWhyTheServiceEndedABuild(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	slow := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	slowWin := w.AddSetting(t, pid, map[string]any{"branch": "slow", "platform": "Win64"})["id"].(string)

	// Superseded while running: the runner writes the line once it stopped.
	first := w.Trigger(t, pid, slow, "")
	w.WaitStatus(t, first, "running")
	second := w.Trigger(t, pid, slow, "")
	w.WaitLastLine(t, first, "kiln: build superseded: a newer build")

	// Cancelled while pending (one worker, busy): nothing ran, the service writes it.
	w.WaitStatus(t, second, "running")
	pending := w.Trigger(t, pid, slowWin, "")
	w.Do(t, "POST", "/builds/"+pending+"/cancel", w.Token, nil)
	w.WaitLastLine(t, pending, "kiln: build failed: cancelled")

	// Cancelled while running.
	w.Do(t, "POST", "/builds/"+second+"/cancel", w.Token, nil)
	w.WaitLastLine(t, second, "kiln: build failed: cancelled")

	// Interrupted: the service stopped while it ran.
	third := w.Trigger(t, pid, slow, "")
	w.WaitStatus(t, third, "running")
	w.Restart(t)
	w.WaitLastLine(t, third, "kiln: build failed: interrupted")
	for _, id := range []string{first, pending, second, third} {
		if n := strings.Count(w.LogText(t, id), "kiln: build "); n != 1 {
			t.Errorf("build %s: %d end lines, want 1:\n%s", id, n, w.LogText(t, id))
		}
	}
}
