package builds

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestCommitOverrideMustBeOnTheBranch: a build of branch main asked to build a commit that only
// another branch holds fails with "commit X is not on branch main" and makes no artifact; a
// commit of main builds.
func TestCommitOverrideMustBeOnTheBranch(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"branch": "main"})["id"].(string)
	old := w.Shooter.Commit("main", "Main work", "Ada Lovelace", map[string]string{"Shooter/Source/Version.txt": "main\n"})
	w.Shooter.Commit("main", "More main work", "Ada Lovelace", map[string]string{"Shooter/Source/Version.txt": "main 2\n"})
	other := w.Shooter.Commit("experiment", "Not reviewed", "Eve", map[string]string{"Shooter/Source/Version.txt": "unreviewed\n"})

	b := w.WaitEnded(t, w.Trigger(t, pid, sid, `{"commit":"`+other+`"}`))
	if b["status"] != "failed" || b["failureReason"] != "commit "+other+" is not on branch main" || b["branch"] != "main" {
		t.Fatalf("a commit of another branch: %v", b)
	}
	if r := w.Do(t, "GET", "/projects/"+pid+"/artifacts?commit="+other, w.Token, nil); len(e2e.Items(t, r)) != 0 {
		t.Fatalf("the refused build made an artifact: %s", r.Raw)
	}
	b = w.WaitEnded(t, w.Trigger(t, pid, sid, `{"commit":"`+old+`"}`))
	if b["status"] != "complete" || b["commit"] != old {
		t.Fatalf("an older commit of main: %v", b)
	}
}
