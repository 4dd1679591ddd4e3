package builds

import (
	"net/http"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestRerunBuild: POST /builds/:id/rerun queues a new build of the same setting, branch and
// commit, triggered by the caller and linked to the original; builds say readably who triggered
// them, by the member's name; a viewer may not re-run, another organization sees no such build,
// and a build of a deleted setting is refused.
func TestRerunBuild(t *testing.T) { e2e.Both(t, rerunBuild) }

func rerunBuild(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"branch": "dev"})["id"].(string)
	orig := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	var owner string
	for _, m := range e2e.Items(t, w.Do(t, "GET", "/organizations/"+w.OrgID+"/members", w.Token, nil)) {
		if m["role"] == "owner" {
			owner = m["user"].(map[string]any)["name"].(string)
		}
	}
	if trig, _ := orig["trigger"].(map[string]any); trig["kind"] != "user" || trig["name"] != owner || owner == "" || orig["rerunOf"] != nil {
		t.Fatalf("the triggered build's trigger: %v, rerunOf %v; want kind user, name %q", orig["trigger"], orig["rerunOf"], owner)
	}
	commit, _ := orig["commit"].(string)
	if commit == "" {
		t.Fatalf("the original build resolved no commit: %v", orig)
	}

	viewer := e2e.AddUser(t, w.Server, w.OrgID, "viewer")
	e2e.WantError(t, w.Do(t, "POST", "/builds/"+orig["id"].(string)+"/rerun", viewer, nil), 403, "insufficient_scope")
	other := e2e.BootstrapOrg(t, w.Server, "Other Studio")
	e2e.WantError(t, w.Do(t, "POST", "/builds/"+orig["id"].(string)+"/rerun", other.Token, nil), 404, "not_found")
	e2e.WantError(t, w.Do(t, "POST", "/builds/nope/rerun", w.Token, nil), 404, "not_found")

	r := w.Do(t, "POST", "/builds/"+orig["id"].(string)+"/rerun", w.Token, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("rerun: %d %s", r.Status, r.Raw)
	}
	again := r.Body
	trig, _ := again["trigger"].(map[string]any)
	if again["id"] == orig["id"] || again["rerunOf"] != orig["id"] || again["buildSettingId"] != sid || again["branch"] != "dev" ||
		again["commit"] != commit || again["status"] != "pending" || trig["kind"] != "rerun" || trig["name"] != owner || trig["rerunOf"] != orig["id"] {
		t.Fatalf("re-run: %s; want a pending build of setting %s at dev %s, rerunOf %s, by %q", r.Raw, sid, commit, orig["id"], owner)
	}
	if got := w.WaitEnded(t, again["id"].(string)); got["status"] != "complete" || got["commit"] != commit {
		t.Fatalf("the re-run ended %v at %v, want complete at %s", got["status"], got["commit"], commit)
	}
	list := e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+sid, w.Token, nil))
	if len(list) != 2 || list[0]["rerunOf"] != orig["id"] || list[0]["trigger"].(map[string]any)["name"] != owner {
		t.Fatalf("builds list: %v", list)
	}

	if r := w.Do(t, "DELETE", "/projects/"+pid+"/build-settings/"+sid, w.Token, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete setting: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "POST", "/builds/"+orig["id"].(string)+"/rerun", w.Token, nil), 409, "invalid_state")
}
