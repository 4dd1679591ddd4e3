package dropin

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// documentedSetting is the documentation's POST /projects/:id/build-settings body without
// ueVersion (it marks it required; kiln takes the .uproject's, as that product does). Linux
// stands in for Win64, the platform the test hosts build.
func documentedSetting(trigger string) map[string]any {
	return map[string]any{"platform": "Linux", "buildType": "Development", "branch": "main", "trigger": trigger, "notifyOnComplete": false}
}

func createSetting(t *testing.T, w *e2e.World, pid string, body map[string]any) map[string]any {
	t.Helper()
	r := w.Do(t, "POST", "/projects/"+pid+"/build-settings", w.Token, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create setting: %d %s", r.Status, r.Raw)
	}
	return r.Body
}

// TestSettingsWithoutEngineOrSchedule: a setting without ueVersion builds with the .uproject's
// EngineAssociation, and says so; a scheduled one without schedule is nightly at 03:00 UTC; a
// .uproject naming an engine no host provides fails the build, naming it and the installed ones;
// without a usable EngineAssociation the organization's default is used.
func TestSettingsWithoutEngineOrSchedule(t *testing.T) { e2e.Both(t, settingsWithoutEngineOrSchedule) }

func settingsWithoutEngineOrSchedule(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	st := createSetting(t, w, pid, documentedSetting("manual"))
	if st["ueVersion"] != nil {
		t.Fatalf("a setting made without ueVersion answers ueVersion %v, want null", st["ueVersion"])
	}
	b := w.WaitEnded(t, w.Trigger(t, pid, st["id"].(string), "{}"))
	if b["status"] != "complete" || b["ueVersion"] != "5.3" || b["ueVersionSource"] != "uproject" {
		t.Fatalf("build %v on %v from %v (%v); want complete on the .uproject's 5.3", b["status"], b["ueVersion"], b["ueVersionSource"], b["failureReason"])
	}

	nightly := createSetting(t, w, pid, documentedSetting("scheduled"))
	if nightly["schedule"] != "0 3 * * *" || nightly["trigger"] != "scheduled" {
		t.Fatalf("scheduled setting without schedule: %v", nightly)
	}
	got := w.Do(t, "GET", "/projects/"+pid+"/build-settings/"+nightly["id"].(string), w.Token, nil)
	if got.Body["schedule"] != "0 3 * * *" {
		t.Fatalf("read back: %s", got.Raw)
	}

	// A project whose .uproject names 5.1, which the hosts (5.3, 5.4) do not provide.
	w.GitHub.AddRepo(e2e.InstallationID, "studio/legacy", false, "main").Commit("main", "Old game", "Ada Lovelace", map[string]string{
		"Legacy/Legacy.uproject": `{"FileVersion": 3, "EngineAssociation": "5.1"}`,
	})
	legacy := addRepo(t, w, "Legacy", "studio/legacy")
	ls := createSetting(t, w, legacy, documentedSetting("manual"))
	lb := w.WaitEnded(t, w.Trigger(t, legacy, ls["id"].(string), "{}"))
	reason, _ := lb["failureReason"].(string)
	if lb["status"] != "failed" || lb["ueVersion"] != "5.1" || !strings.Contains(reason, "5.1") || !strings.Contains(reason, "5.3, 5.4") {
		t.Fatalf("a build of a .uproject on 5.1 ended %v (%q); want failed, naming 5.1 and the installed 5.3, 5.4", lb["status"], reason)
	}

	// A source-built engine's GUID is no version: the organization's default is used.
	w.GitHub.AddRepo(e2e.InstallationID, "studio/source", false, "main").Commit("main", "Source build", "Ada Lovelace", map[string]string{
		"Src/Src.uproject": `{"EngineAssociation": "{3F2A9C1B-4D5E-4F60-8A7B-9C0D1E2F3A4B}"}`,
	})
	src := addRepo(t, w, "Src", "studio/source")
	if r := w.Do(t, "PATCH", "/organizations/"+w.OrgID, w.Token, map[string]any{"defaultProjectSettings": map[string]any{"ueVersion": "5.4"}}); r.Status != 200 {
		t.Fatalf("org default: %d %s", r.Status, r.Raw)
	}
	ss := createSetting(t, w, src, documentedSetting("manual"))
	if ss["ueVersion"] != nil {
		t.Fatalf("the organization's default was copied into the setting: %v", ss["ueVersion"])
	}
	sb := w.Do(t, "GET", "/builds/"+w.Trigger(t, src, ss["id"].(string), "{}"), w.Token, nil)
	if sb.Body["ueVersion"] != "5.4" || sb.Body["ueVersionSource"] != "organization" {
		t.Fatalf("build of a GUID .uproject: %v from %v, want the organization's 5.4", sb.Body["ueVersion"], sb.Body["ueVersionSource"])
	}
}

func addRepo(t *testing.T, w *e2e.World, name, repo string) string {
	t.Helper()
	r := w.Do(t, "POST", "/projects/add-repo", w.Token, map[string]any{"name": name, "installationId": w.Installation, "repoFullName": repo})
	if r.Status != http.StatusCreated {
		t.Fatalf("add-repo %s: %d %s", repo, r.Status, r.Raw)
	}
	return e2e.Field(t, r.Body, "id")
}

// TestAbbreviatedCommitAndRerun: the documented override {"commit": "abc123"} works with a
// 6-digit abbreviation of a commit on the branch (resolved to the full sha); a prefix of no
// commit is 400 validation_failed on commit and queues nothing; the re-run answers buildId as a
// trigger does.
func TestAbbreviatedCommitAndRerun(t *testing.T) { e2e.Both(t, abbreviatedCommitAndRerun) }

func abbreviatedCommitAndRerun(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	sid := createSetting(t, w, pid, documentedSetting("manual"))["id"].(string)
	head := w.Shooter.Head("main")
	var unknown string
	for _, p := range []string{"abc123", "abc124", "fed987"} {
		if !strings.HasPrefix(head, p) {
			unknown = p
			break
		}
	}
	trigger := "/projects/" + pid + "/build-settings/" + sid + "/trigger"
	r := w.Do(t, "POST", trigger, w.Token, map[string]any{"commit": unknown})
	e2e.WantError(t, r, 400, "validation_failed")
	if fields, _ := r.Body["fields"].(map[string]any); fields["commit"] == nil {
		t.Fatalf("an unknown prefix: %s; want the error on commit", r.Raw)
	}
	if list := e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+sid, w.Token, nil)); len(list) != 0 {
		t.Fatalf("a refused trigger queued %d builds", len(list))
	}

	r = w.Do(t, "POST", trigger, w.Token, map[string]any{"commit": head[:6]})
	if r.Status != http.StatusAccepted || r.Body["buildId"] == nil || r.Body["status"] != "pending" {
		t.Fatalf("trigger at %s: %d %s", head[:6], r.Status, r.Raw)
	}
	id := r.Body["buildId"].(string)
	b := w.WaitEnded(t, id)
	if b["commit"] != head || b["status"] != "complete" {
		t.Fatalf("the build of %s built %v (%v), want the full %s", head[:6], b["commit"], b["status"], head)
	}

	// The documented handling of a trigger's answer works on the re-run's too.
	rr := w.Do(t, "POST", "/builds/"+id+"/rerun", w.Token, "{}")
	if rr.Status != http.StatusAccepted {
		t.Fatalf("rerun: %d %s", rr.Status, rr.Raw)
	}
	for _, f := range []string{"buildId", "projectId", "buildSettingId", "status"} {
		if rr.Body[f] == nil {
			t.Fatalf("the re-run's answer has no %s: %s", f, rr.Raw)
		}
	}
	if rr.Body["buildId"] == id || rr.Body["buildId"] != rr.Body["id"] || rr.Body["projectId"] != pid || rr.Body["buildSettingId"] != sid {
		t.Fatalf("the re-run's answer: %s", rr.Raw)
	}
	if again := w.WaitEnded(t, rr.Body["buildId"].(string)); again["commit"] != head {
		t.Fatalf("the re-run built %v, want %s", again["commit"], head)
	}
}
