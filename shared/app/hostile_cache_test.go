package app

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/runner"
)

// TestHostileCachesCannotReachAnotherOrganization: organization B knows organization A's ids
// (so the path of A's workspace) and attacks it through the build cache, which kiln saves,
// restores and clears as root after and before B's builds: with a project directory committed
// as a symbolic link to A's, and with one swapped in by B's build script at the end of its step.
// Neither reads, writes nor removes anything of A's: the committed link fails B's build before it
// starts, the swapped one leaves B's cache unsaved, a clean build of B clears only B's, and A's
// next build is warm from its own objects.
func TestHostileCachesCannotReachAnotherOrganization(t *testing.T) {
	if onAWSLocal(t) {
		t.Skip("kiln serve's own workspaces")
	}
	w := newWorld(t)
	w.shooter.Commit("main", "Incremental builds", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": incrementalEngine})
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, nil)["id"].(string)
	first := w.waitEnded(t, w.trigger(t, pid, sid, ""))
	if first["status"] != "complete" {
		t.Fatalf("A's first build: %v", first)
	}
	victim := filepath.Join(w.cfg.Data, "workspaces", w.orgID, pid, runner.WorkspaceKey("main"), "Shooter")
	before := snapshot(t, victim)
	if len(before) == 0 || !hasPrefixKey(before, "Intermediate/") || !hasPrefixKey(before, "DerivedDataCache/") {
		t.Fatalf("A's workspace holds no cached directories: %v", before)
	}
	engineBefore := snapshot(t, w.cfg.Engines)

	b := newRivalShooter(t, w, 7801, "attacker/shooter")

	t.Run("CommittedLink", func(t *testing.T) {
		b.repo.CommitSymlinks("main", "Point the project at A's", "Mallory", map[string]string{"Shooter": victim})
		got := b.build(t, "")
		if got["status"] != "failed" || !strings.Contains(got["failureReason"].(string), "symbolic link") {
			t.Fatalf("B's build through a committed link: %v %v; want failed for the link", got["status"], got["failureReason"])
		}
		b.repo.CommitSymlinks("main", "And at the engine", "Mallory", map[string]string{"Shooter": w.cfg.Engines})
		if got := b.build(t, `{"clean": true}`); got["status"] != "failed" {
			t.Fatalf("B's clean build through a committed link to the engine: %v", got["status"])
		}
	})

	t.Run("LinkSwappedInAtTheEndOfTheStep", func(t *testing.T) {
		// The build script swaps its project directory for a link to A's as RunUAT exits.
		swap := incrementalEngine + "trap 'cd \"$projectdir/..\" && mv Shooter Shooter.real && ln -s " + victim + " Shooter' EXIT\n"
		b.repo.Commit("main", "A real project again", "Mallory", map[string]string{
			"Shooter/Shooter.uproject": shooterUproject, "Shooter/FakeUAT.env": swap,
		})
		got := b.build(t, "")
		if got["status"] != "complete" {
			t.Fatalf("B's swapping build: %v %v\n%s", got["status"], got["failureReason"], b.log(t, got))
		}
		if log := b.log(t, got); !strings.Contains(log, "the build cache was not saved") || !strings.Contains(log, "symbolic link") {
			t.Fatalf("B's log does not say its cache was not saved for the link:\n%s", log)
		}
		// A clean build of B (the delete of the review) and a warm one (the write).
		for _, body := range []string{`{"clean": true}`, ""} {
			if got := b.build(t, body); got["status"] != "complete" && got["status"] != "failed" {
				t.Fatalf("B's build %s: %v", body, got)
			}
		}
	})

	if after := snapshot(t, victim); !sameSnapshot(before, after) {
		t.Fatalf("A's workspace changed under B's attacks:\nbefore %v\nafter  %v", before, after)
	}
	if after := snapshot(t, w.cfg.Engines); !sameSnapshot(engineBefore, after) {
		t.Fatalf("the engine changed under B's attacks")
	}
	next := w.waitEnded(t, w.trigger(t, pid, sid, ""))
	log := w.logText(t, next["id"].(string))
	if next["status"] != "complete" || !strings.Contains(log, "Compile: 3 of 3 objects up to date") {
		t.Fatalf("A's next build: %v\n%s", next["status"], log)
	}
}

// rivalShooter is another organization's Shooter project, of its own repository.
type rivalShooter struct {
	w        *world
	tenant   tenant
	repo     *githubtest.Repo
	pid, sid string
}

func newRivalShooter(t *testing.T, w *world, inst int64, repoName string) *rivalShooter {
	t.Helper()
	r := &rivalShooter{w: w, tenant: bootstrapOrg(t, w.testService, "Rival "+repoName)}
	w.gh.AddInstallation(inst, strings.Split(repoName, "/")[0])
	r.repo = w.gh.AddRepo(inst, repoName, true, "main")
	r.repo.Commit("main", "Add the game", "Mallory", map[string]string{
		"Shooter/Shooter.uproject": shooterUproject, "Shooter/FakeUAT.env": incrementalEngine,
	})
	instID := strconv.FormatInt(inst, 10)
	r.as(t, "PATCH", "/organizations/"+r.tenant.orgID, map[string]any{"integrationSettings": map[string]any{"github": map[string]any{"installationId": instID}}}, http.StatusOK)
	r.pid = field(t, r.as(t, "POST", "/projects/add-repo", map[string]any{"name": "Shooter", "installationId": instID, "repoFullName": repoName}, http.StatusCreated), "id")
	r.sid = field(t, r.as(t, "POST", "/projects/"+r.pid+"/build-settings", map[string]any{"platform": "Linux", "buildType": "Shipping",
		"ueVersion": "5.3", "trigger": "manual", "branch": "main", "uprojectPath": "Shooter/Shooter.uproject"}, http.StatusCreated), "id")
	return r
}

func (r *rivalShooter) as(t *testing.T, method, path string, body any, want int) map[string]any {
	t.Helper()
	res := r.w.do(t, method, path, r.tenant.token, body)
	if res.Status != want {
		t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Raw)
	}
	return res.Body
}

// build triggers the rival's setting and waits for the build to end.
func (r *rivalShooter) build(t *testing.T, body string) map[string]any {
	t.Helper()
	id := field(t, r.as(t, "POST", "/projects/"+r.pid+"/build-settings/"+r.sid+"/trigger", body, http.StatusAccepted), "buildId")
	deadline := time.Now().Add(90 * time.Second)
	for {
		b := r.as(t, "GET", "/builds/"+id, nil, http.StatusOK)
		if s := b["status"]; s != "pending" && s != "running" {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rival's build never ended: %v", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *rivalShooter) log(t *testing.T, b map[string]any) string {
	t.Helper()
	return r.w.logTextAs(t, b["id"].(string), r.tenant.token)
}

// snapshot is every file under dir (relative path → size and modification time), without
// following links.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = fi.Mode().String() + " " + strconv.FormatInt(fi.Size(), 10) + " " + fi.ModTime().String()
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func hasPrefixKey(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
