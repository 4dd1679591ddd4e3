package caches

import (
	"archive/tar"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
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
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	w.Shooter.Commit("main", "Incremental builds", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": incrementalEngine})
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	first := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	if first["status"] != "complete" {
		t.Fatalf("A's first build: %v", first)
	}
	victim := filepath.Join(w.Config.Data, "workspaces", w.OrgID, pid, runner.WorkspaceKey("main"), "Shooter")
	before := snapshot(t, victim)
	if len(before) == 0 || !hasPrefixKey(before, "Intermediate/") || !hasPrefixKey(before, "DerivedDataCache/") {
		t.Fatalf("A's workspace holds no cached directories: %v", before)
	}
	engineBefore := snapshot(t, w.Config.Engines)

	b := newRivalShooter(t, w, 7801, "attacker/shooter")

	t.Run("CommittedLink", func(t *testing.T) {
		b.repo.CommitSymlinks("main", "Point the project at A's", "Mallory", map[string]string{"Shooter": victim})
		got := b.build(t, "")
		if got["status"] != "failed" || !strings.Contains(got["failureReason"].(string), "symbolic link") {
			t.Fatalf("B's build through a committed link: %v %v; want failed for the link", got["status"], got["failureReason"])
		}
		b.repo.CommitSymlinks("main", "And at the engine", "Mallory", map[string]string{"Shooter": w.Config.Engines})
		if got := b.build(t, `{"clean": true}`); got["status"] != "failed" {
			t.Fatalf("B's clean build through a committed link to the engine: %v", got["status"])
		}
	})

	t.Run("LinkSwappedInAtTheEndOfTheStep", func(t *testing.T) {
		// The build script swaps its project directory for a link to A's as RunUAT exits.
		swap := incrementalEngine + "trap 'cd \"$projectdir/..\" && mv Shooter Shooter.real && ln -s " + victim + " Shooter' EXIT\n"
		b.repo.Commit("main", "A real project again", "Mallory", map[string]string{
			"Shooter/Shooter.uproject": e2e.ShooterUproject, "Shooter/FakeUAT.env": swap,
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
	if after := snapshot(t, w.Config.Engines); !sameSnapshot(engineBefore, after) {
		t.Fatalf("the engine changed under B's attacks")
	}
	next := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	log := w.LogText(t, next["id"].(string))
	if next["status"] != "complete" || !strings.Contains(log, "Compile: 3 of 3 objects up to date") {
		t.Fatalf("A's next build: %v\n%s", next["status"], log)
	}
}

// rivalShooter is another organization's Shooter project, of its own repository.
type rivalShooter struct {
	w        *e2e.World
	tenant   e2e.Tenant
	repo     *githubtest.Repo
	pid, sid string
}

func newRivalShooter(t *testing.T, w *e2e.World, inst int64, repoName string) *rivalShooter {
	t.Helper()
	r := &rivalShooter{w: w, tenant: e2e.BootstrapOrg(t, w.Server, "Rival "+repoName)}
	w.GitHub.AddInstallation(inst, strings.Split(repoName, "/")[0])
	r.repo = w.GitHub.AddRepo(inst, repoName, true, "main")
	r.repo.Commit("main", "Add the game", "Mallory", map[string]string{
		"Shooter/Shooter.uproject": e2e.ShooterUproject, "Shooter/FakeUAT.env": incrementalEngine,
	})
	instID := strconv.FormatInt(inst, 10)
	r.as(t, "PATCH", "/organizations/"+r.tenant.OrgID, map[string]any{"integrationSettings": map[string]any{"github": map[string]any{"installationId": instID}}}, http.StatusOK)
	r.pid = e2e.Field(t, r.as(t, "POST", "/projects/add-repo", map[string]any{"name": "Shooter", "installationId": instID, "repoFullName": repoName}, http.StatusCreated), "id")
	r.sid = e2e.Field(t, r.as(t, "POST", "/projects/"+r.pid+"/build-settings", map[string]any{"platform": "Linux", "buildType": "Shipping",
		"ueVersion": "5.3", "trigger": "manual", "branch": "main", "uprojectPath": "Shooter/Shooter.uproject"}, http.StatusCreated), "id")
	return r
}

func (r *rivalShooter) as(t *testing.T, method, path string, body any, want int) map[string]any {
	t.Helper()
	res := r.w.Do(t, method, path, r.tenant.Token, body)
	if res.Status != want {
		t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Raw)
	}
	return res.Body
}

// build triggers the rival's setting and waits for the build to end.
func (r *rivalShooter) build(t *testing.T, body string) map[string]any {
	t.Helper()
	id := e2e.Field(t, r.as(t, "POST", "/projects/"+r.pid+"/build-settings/"+r.sid+"/trigger", body, http.StatusAccepted), "buildId")
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
	return r.w.LogTextAs(t, b["id"].(string), r.tenant.Token)
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

// TestHostileSpecialFilesStayOutOfTheCache: a build script leaves a FIFO and a hard link in its
// Intermediate/ at the end of its step, then a file where DerivedDataCache/ was. The save neither
// hangs on the FIFO nor keeps either link's file; the file for a directory leaves the build
// complete with its cache unsaved, and the next build restores the last good one.
func TestHostileSpecialFilesStayOutOfTheCache(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	obj := "Intermediate/Build/Linux/Shooter/Shipping/obj1.o"
	w.Shooter.Commit("main", "Leave special files", "Mallory", map[string]string{"Shooter/FakeUAT.env": incrementalEngine +
		"trap 'cd \"$projectdir\" && mkfifo Intermediate/pipe.o && ln " + obj + " Intermediate/hard.o' EXIT\n"})
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	first := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	if first["status"] != "complete" || !strings.Contains(w.LogText(t, first["id"].(string)), "saved the build cache") {
		t.Fatalf("first build: %v\n%s", first["status"], w.LogText(t, first["id"].(string)))
	}
	names := cachedNames(t, w, first["id"].(string))
	for _, n := range []string{"Shooter/Intermediate/pipe.o", "Shooter/Intermediate/hard.o", "Shooter/" + obj} {
		if names[strings.TrimPrefix(n, "Shooter/")] {
			t.Errorf("the cache holds %s (a FIFO, or a file with another name)", n)
		}
	}
	if !names["DerivedDataCache/"] {
		t.Errorf("the cache lost its derived data: %v", names)
	}

	w.Shooter.Commit("main", "A file for a directory", "Mallory", map[string]string{"Shooter/FakeUAT.env": incrementalEngine +
		"trap 'cd \"$projectdir\" && rm -rf DerivedDataCache && echo not-a-dir > DerivedDataCache' EXIT\n"})
	second := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	if log := w.LogText(t, second["id"].(string)); second["status"] != "complete" || !strings.Contains(log, "the build cache could not be saved") {
		t.Fatalf("second build: %v\n%s", second["status"], log)
	}
	w.Shooter.Commit("main", "Plain again", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": incrementalEngine})
	third := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	wantCache(t, third, "warm", first["id"].(string), "")
	if log := w.LogText(t, third["id"].(string)); third["status"] != "complete" || !strings.Contains(log, "restored the build cache of build "+first["id"].(string)) {
		t.Fatalf("third build: %v\n%s", third["status"], log)
	}
}

// cachedNames lists the entries of the cache build saved on kiln serve's file store.
func cachedNames(t *testing.T, w *e2e.World, build string) map[string]bool {
	t.Helper()
	var found string
	_ = filepath.WalkDir(w.Config.Data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == build+".tar.zst" {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no cache saved by %s", build)
	}
	f, err := os.Open(found)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	names := map[string]bool{}
	tr := tar.NewReader(dec)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names[hdr.Name] = true
	}
}
