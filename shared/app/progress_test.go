package app

import (
	"testing"
)

// TestBuildProgress: a build records the stages its runner's log announces; a running build of a
// setting with a complete build shows its stage and an estimate based on it (in the build and in
// the list); a complete build has all its stages ended, no current stage and no estimate.
func TestBuildProgress(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, map[string]any{"branch": "dev"})["id"].(string)
	first := w.waitEnded(t, w.trigger(t, pid, sid, ""))
	if first["status"] != "complete" {
		t.Fatalf("the first build: %v", first)
	}
	wantCompleteStages(t, first)

	w.shooter.Commit("dev", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	id := w.trigger(t, pid, sid, "")
	running := w.waitBuild(t, id, "in its compile stage with progress", func(b map[string]any) bool {
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
	over := w.waitBuild(t, id, "overrunning", func(b map[string]any) bool {
		p, _ := b["progress"].(map[string]any)
		return p != nil && p["overrun"] == true
	})["progress"].(map[string]any)
	if over["remainingMs"] != nil || over["percent"] != float64(99) {
		t.Errorf("progress of a build past its history: %v; want remainingMs null at 99%%", over)
	}
	list := items(t, w.do(t, "GET", "/builds?buildSettingId="+sid+"&status=running", w.token, nil))
	if len(list) != 1 || list[0]["progress"] == nil || list[0]["stage"] != "compile" {
		t.Fatalf("the running build in the list: %v", list)
	}
	if r := w.do(t, "POST", "/builds/"+id+"/cancel", w.token, nil); r.Status >= 300 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
}

// wantCompleteStages checks a complete build's stages: sync first, upload last, all ended; and no
// current stage nor progress.
func wantCompleteStages(t *testing.T, b map[string]any) {
	t.Helper()
	stages, _ := b["stages"].([]any)
	var names []string
	for _, s := range stages {
		st := s.(map[string]any)
		names = append(names, st["name"].(string))
		if st["endedAt"] == nil {
			t.Errorf("stage %v of a complete build is not ended", st)
		}
	}
	if len(names) < 5 || names[0] != "sync" || names[len(names)-1] != "upload" || b["stage"] != nil || b["progress"] != nil {
		t.Fatalf("complete build: stages %v, stage %v, progress %v; want sync … upload, all ended, no stage nor progress", names, b["stage"], b["progress"])
	}
}
