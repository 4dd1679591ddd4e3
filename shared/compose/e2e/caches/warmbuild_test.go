package caches

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// incrementalEngine makes the stand-in engine compile objects and cook assets incrementally
// (testdata/fake-engine: objects in Intermediate/, cooked data in the derived data cache).
const incrementalEngine = "FAKE_UAT_OBJECTS=3\nFAKE_UAT_COMPILE_MS=100\nFAKE_UAT_ASSETS=6\nFAKE_UAT_COOK_MS=100\n"

var ddcCounts = regexp.MustCompile(`hits (\d+) misses (\d+) of (\d+) assets`)

// TestBuildCacheWarmsTheNextBuildOfABranch: the second build of a branch starts from the cache
// the first saved (the build and its log say so, and the engine finds all its derived data); a
// clean build ignores and replaces it; a new branch starts from main's, which it never replaces; another engine version, and another organization's
// project of the same name and branch, start cold.
func TestBuildCacheWarmsTheNextBuildOfABranch(t *testing.T) {
	e2e.Both(t, buildCacheWarmsTheNextBuildOfABranch)
}

func buildCacheWarmsTheNextBuildOfABranch(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	w.Shooter.Commit("main", "Incremental builds", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": incrementalEngine})
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)

	buildOf := func(t *testing.T, setting, body string) (map[string]any, string) {
		t.Helper()
		id := w.Trigger(t, pid, setting, body)
		b := w.WaitEnded(t, id)
		if b["status"] != "complete" {
			t.Fatalf("build ended %v: %v\nlog:\n%s", b["status"], b["failureReason"], w.LogText(t, id))
		}
		return b, w.LogText(t, id)
	}
	build := func(t *testing.T, body string) (map[string]any, string) { t.Helper(); return buildOf(t, sid, body) }
	first, log1 := build(t, "")
	wantCache(t, first, "cold", "", "no build of this branch, platform and engine version has saved a cache yet")
	wantDDC(t, log1, 0, 6)
	if !strings.Contains(log1, "cold build:") || !strings.Contains(log1, "saved the build cache") {
		t.Fatalf("first build's log does not say it started cold and saved the cache:\n%s", log1)
	}

	second, log2 := build(t, "")
	wantCache(t, second, "warm", first["id"].(string), "")
	wantDDC(t, log2, 6, 0)
	if !strings.Contains(log2, "warm build:") || !strings.Contains(log2, first["id"].(string)) {
		t.Fatalf("second build's log does not say it started warm from %s:\n%s", first["id"], log2)
	}
	if !strings.Contains(log2, "Compile: 3 of 3 objects up to date") {
		t.Fatalf("second build recompiled:\n%s", log2)
	}

	clean, log3 := build(t, `{"clean": true}`)
	if clean["clean"] != true {
		t.Fatalf("clean build: %v", clean)
	}
	wantCache(t, clean, "cold", "", "a clean build was asked for")
	wantDDC(t, log3, 0, 6)
	after, _ := build(t, "")
	wantCache(t, after, "warm", clean["id"].(string), "") // the clean build replaced the cache

	// A new branch's first build starts warm from main's cache, read-only: main's next build is
	// warm from main's own, and the branch's next from the branch's first.
	w.Shooter.CreateBranches("main", "feature/warm")
	branchFirst, logB := build(t, `{"branch": "feature/warm"}`)
	wantCache(t, branchFirst, "warm", after["id"].(string), "")
	if !strings.Contains(logB, "feature/warm has no build cache yet, so kiln restored the default branch's") ||
		!strings.Contains(logB, "Compile: 3 of 3 objects up to date") {
		t.Fatalf("a new branch's first build does not say it started from main's cache:\n%s", logB)
	}
	mainAgain, _ := build(t, "")
	wantCache(t, mainAgain, "warm", after["id"].(string), "")
	branchSecond, _ := build(t, `{"branch": "feature/warm"}`)
	wantCache(t, branchSecond, "warm", branchFirst["id"].(string), "")
	after = mainAgain

	// A second setting builds the same key (a Development build of main on 5.3): it keeps that
	// key's cache when the first setting moves to another engine version.
	sid2 := w.AddSetting(t, pid, map[string]any{"buildType": "Development"})["id"].(string)

	// Another engine version never reuses this one's cache.
	if r := w.Do(t, "PATCH", "/projects/"+pid+"/build-settings/"+sid, w.Token, map[string]any{"ueVersion": "5.4"}); r.Status != http.StatusOK {
		t.Fatalf("PATCH ueVersion: %d %s", r.Status, r.Raw)
	}
	other, log5 := build(t, "")
	wantCache(t, other, "cold", "", "no build of this branch, platform and engine version has saved a cache yet")
	wantDDC(t, log5, 0, 6)

	if dep != e2e.AWSLocal { // there the caches are MinIO's objects, not files to break
		breakTheCache(t, w, after["id"].(string), func(t *testing.T, body string) (map[string]any, string) { return buildOf(t, sid2, body) })
	}

	t.Run("AnotherOrganizationStartsCold", func(t *testing.T) {
		rival := e2e.BootstrapOrg(t, w.Server, "Rival Studio")
		w.GitHub.AddInstallation(7777, "rival")
		repo := w.GitHub.AddRepo(7777, "rival/shooter", true, "main")
		repo.Commit("main", "Add the game", "Eve", map[string]string{
			"Shooter/Shooter.uproject": e2e.ShooterUproject, "Shooter/FakeUAT.env": incrementalEngine,
		})
		as := func(method, path string, body any, want int) map[string]any {
			t.Helper()
			r := w.Do(t, method, path, rival.Token, body)
			if r.Status != want {
				t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
			}
			return r.Body
		}
		as("PATCH", "/organizations/"+rival.OrgID, map[string]any{"integrationSettings": map[string]any{"github": map[string]any{"installationId": "7777"}}}, http.StatusOK)
		rp := e2e.Field(t, as("POST", "/projects/add-repo", map[string]any{"name": "Shooter", "installationId": "7777", "repoFullName": "rival/shooter"}, http.StatusCreated), "id")
		rs := e2e.Field(t, as("POST", "/projects/"+rp+"/build-settings", map[string]any{"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main"}, http.StatusCreated), "id")
		id := e2e.Field(t, as("POST", "/projects/"+rp+"/build-settings/"+rs+"/trigger", "", http.StatusAccepted), "buildId")
		deadline := time.Now().Add(60 * time.Second)
		var b map[string]any
		for b = as("GET", "/builds/"+id, nil, http.StatusOK); b["status"] == "pending" || b["status"] == "running"; b = as("GET", "/builds/"+id, nil, http.StatusOK) {
			if time.Now().After(deadline) {
				t.Fatalf("rival build never ended: %v", b)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if b["status"] != "complete" {
			t.Fatalf("rival build: %v", b)
		}
		wantCache(t, b, "cold", "", "no build of this branch, platform and engine version has saved a cache yet")
	})
}

// wantCache checks a build's cache: its state, the build it came from and why it was cold.
func wantCache(t *testing.T, b map[string]any, state, from, reason string) {
	t.Helper()
	c, ok := b["cache"].(map[string]any)
	if !ok {
		t.Fatalf("build %v has no cache: %v", b["id"], b["cache"])
	}
	str := func(v any) string { s, _ := v.(string); return s }
	if str(c["state"]) != state || str(c["fromBuildId"]) != from || str(c["reason"]) != reason {
		t.Fatalf("build %v cache = %v; want state %q from %q reason %q", b["id"], c, state, from, reason)
	}
}

// wantDDC checks the stand-in engine's derived data cache hits and misses in a build's log.
func wantDDC(t *testing.T, log string, hits, misses int) {
	t.Helper()
	m := ddcCounts.FindStringSubmatch(log)
	if m == nil || m[1] != strconv.Itoa(hits) || m[2] != strconv.Itoa(misses) {
		t.Fatalf("derived data cache: %v; want hits %d misses %d\nlog:\n%s", m, hits, misses, log)
	}
}

// breakTheCache damages the cache build after saved (on kiln serve's file store), then builds
// the 5.3 key again with build: the workspace holds 5.4's directories, so the cache is restored
// from the store, and a broken one makes a cold build, not a failed one.
func breakTheCache(t *testing.T, w *e2e.World, after string, build func(*testing.T, string) (map[string]any, string)) {
	t.Helper()
	var saved []string
	_ = filepath.WalkDir(w.Config.Data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == after+".tar.zst" {
			saved = append(saved, p)
		}
		return nil
	})
	if len(saved) != 1 {
		t.Fatalf("the cache build %s saved: %v", after, saved)
	}
	if err := os.WriteFile(saved[0], []byte("not a zstd stream"), 0o600); err != nil {
		t.Fatal(err)
	}
	broken, log6 := build(t, "")
	if c, _ := broken["cache"].(map[string]any); c["state"] != "cold" || !strings.HasPrefix(c["reason"].(string), "the cache could not be restored: ") {
		t.Fatalf("build after a broken cache: %v", broken["cache"])
	}
	wantDDC(t, log6, 0, 6)
}
