package app

import (
	"strings"
	"testing"
	"time"
)

// waitLastLine polls a build's log until its last line holds want (or fails after a minute).
func (w *world) waitLastLine(t *testing.T, id, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		lines := strings.Split(strings.TrimRight(w.logText(t, id), "\n"), "\n")
		last := lines[len(lines)-1]
		if strings.Contains(last, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s: last log line %q, want one with %q", id, last, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTheLogSaysWhyTheServiceEndedABuild(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	w.shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	slow := w.addSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	slowWin := w.addSetting(t, pid, map[string]any{"branch": "slow", "platform": "Win64"})["id"].(string)

	// Superseded while running: the runner writes the line once it stopped.
	first := w.trigger(t, pid, slow, "")
	w.waitStatus(t, first, "running")
	second := w.trigger(t, pid, slow, "")
	w.waitLastLine(t, first, "kiln: build superseded: a newer build")

	// Cancelled while pending (one worker, busy): nothing ran, the service writes it.
	w.waitStatus(t, second, "running")
	pending := w.trigger(t, pid, slowWin, "")
	w.do(t, "POST", "/builds/"+pending+"/cancel", w.token, nil)
	w.waitLastLine(t, pending, "kiln: build failed: cancelled")

	// Cancelled while running.
	w.do(t, "POST", "/builds/"+second+"/cancel", w.token, nil)
	w.waitLastLine(t, second, "kiln: build failed: cancelled")

	// Interrupted: the service stopped while it ran.
	third := w.trigger(t, pid, slow, "")
	w.waitStatus(t, third, "running")
	w.restart(t)
	w.waitLastLine(t, third, "kiln: build failed: interrupted")
	for _, id := range []string{first, pending, second, third} {
		if n := strings.Count(w.logText(t, id), "kiln: build "); n != 1 {
			t.Errorf("build %s: %d end lines, want 1:\n%s", id, n, w.logText(t, id))
		}
	}
}
