package builds

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestBuildProgress: a build records the stages its runner's log announces; a running build of a
// setting with a complete build shows its stage and an estimate based on it (in the build and in
// the list); a complete build has all its stages ended, no current stage and no estimate.
func TestBuildProgress(t *testing.T) { e2e.Both(t, buildProgress) }

func buildProgress(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"branch": "dev"})["id"].(string)
	first := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	if first["status"] != "complete" {
		t.Fatalf("the first build: %v", first)
	}
	e2e.WantCompleteStages(t, first)

	w.Shooter.Commit("dev", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	id := w.Trigger(t, pid, sid, "")
	running := w.WaitBuild(t, id, "in its compile stage with progress", func(b map[string]any) bool {
		return b["stage"] == "compile" && b["progress"] != nil
	})
	p := running["progress"].(map[string]any)
	if p["stage"] != "compile" || p["basedOn"] != float64(1) || p["percent"].(float64) < 0 || p["percent"].(float64) > 99 || p["elapsedMs"].(float64) < 0 {
		t.Fatalf("progress: %v", p)
	}
	if p["overrun"] == false && p["remainingMs"] == nil {
		t.Errorf("progress without overrun has no time left: %v", p)
	}
	// The first build's stages took a second or two, this one's a minute each: it overruns.
	over := w.WaitBuild(t, id, "overrunning", func(b map[string]any) bool {
		p, _ := b["progress"].(map[string]any)
		return p != nil && p["overrun"] == true
	})["progress"].(map[string]any)
	if over["remainingMs"] != nil || over["percent"] != float64(99) {
		t.Errorf("progress of a build past its history: %v; want remainingMs null at 99%%", over)
	}
	list := e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+sid+"&status=running", w.Token, nil))
	if len(list) != 1 || list[0]["progress"] == nil || list[0]["stage"] != "compile" {
		t.Fatalf("the running build in the list: %v", list)
	}
	if r := w.Do(t, "POST", "/builds/"+id+"/cancel", w.Token, nil); r.Status >= 300 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
}
