package builds

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestBuildSizeReport builds two commits whose staged output differs and reads the size report:
// the manifest pages by path, the size diff lists what grew, shrank, appeared and vanished,
// largest change first; another organization's build and a build without a manifest are refused.
func TestBuildSizeReport(t *testing.T) { e2e.Both(t, buildSizeReport) }

func buildSizeReport(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	w.Shooter.Commit("main", "Base", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_PAK_MB=2\n" +
		`FAKE_UAT_FILES="Shooter/Content/Movies/Intro.bk2:3000 Shooter/Config/Old.ini:500"` + "\n"})
	base := w.Trigger(t, pid, sid, "")
	if b := w.WaitEnded(t, base); b["status"] != "complete" {
		t.Fatalf("base build %v: %v\n%s", b["status"], b["failureReason"], w.LogText(t, base))
	}
	w.Shooter.Commit("main", "Head", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_PAK_MB=3\n" +
		`FAKE_UAT_FILES="Shooter/Content/Movies/Intro.bk2:1000 Shooter/Content/Paks/pakchunk1-Linux.pak:70000"` + "\n"})
	head := w.Trigger(t, pid, sid, "")
	if b := w.WaitEnded(t, head); b["status"] != "complete" {
		t.Fatalf("head build %v: %v\n%s", b["status"], b["failureReason"], w.LogText(t, head))
	}

	// The manifest, two files a page, walked to the end: every file of the artifact, by path.
	var paths []string
	sizes := map[string]float64{}
	for next := "/builds/" + head + "/manifest?limit=2"; next != ""; {
		r := w.Do(t, "GET", next, w.Token, nil)
		page := e2e.Items(t, r)
		if len(page) > 2 {
			t.Fatalf("page of %d", len(page))
		}
		for _, it := range page {
			p := it["path"].(string)
			paths = append(paths, p)
			sizes[p] = it["sizeBytes"].(float64)
		}
		next = ""
		if c, _ := r.Body["nextCursor"].(string); c != "" {
			next = "/builds/" + head + "/manifest?limit=2&cursor=" + c
		}
	}
	if !sortedStrings(paths) || len(paths) < 8 {
		t.Errorf("manifest paths not sorted or too few: %v", paths)
	}
	for p, want := range map[string]float64{"Shooter/Content/Paks/Shooter-Linux.pak": 3 << 20, "Shooter/Content/Movies/Intro.bk2": 1000,
		"Shooter/Content/Paks/pakchunk1-Linux.pak": 70000} {
		if sizes[p] != want {
			t.Errorf("manifest %s: %v bytes, want %v", p, sizes[p], want)
		}
	}
	if _, ok := sizes["Shooter/Config/Old.ini"]; ok {
		t.Error("head's manifest lists a file it does not have")
	}
	// The artifact holds exactly those files.
	d := w.Do(t, "GET", "/builds/"+head+"/download", w.Token, nil)
	var archived []string
	for _, n := range e2e.TarEntries(t, e2e.FetchArtifact(t, e2e.Field(t, d.Body, "url"))) {
		if _, rest, ok := strings.Cut(n, "/"); ok && rest != "" && !strings.HasSuffix(rest, "/") {
			archived = append(archived, rest)
		}
	}
	if !reflect.DeepEqual(sortedCopy(archived), paths) {
		t.Errorf("manifest %v\nartifact %v", paths, sortedCopy(archived))
	}

	r := w.Do(t, "GET", "/builds/"+head+"/size-diff?base="+base, w.Token, nil)
	if r.Status != 200 {
		t.Fatalf("size-diff: %d %s", r.Status, r.Raw)
	}
	var got []string
	for _, it := range e2e.Items(t, r) {
		got = append(got, it["change"].(string)+" "+it["path"].(string)+" "+ftoa(it["baseBytes"])+"→"+ftoa(it["bytes"])+" "+ftoa(it["deltaBytes"]))
	}
	want := []string{
		"grew Shooter/Content/Paks/Shooter-Linux.pak 2097152→3145728 1048576",
		"appeared Shooter/Content/Paks/pakchunk1-Linux.pak 0→70000 70000",
		"shrank Shooter/Content/Movies/Intro.bk2 3000→1000 -2000",
		"vanished Shooter/Config/Old.ini 500→0 -500",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("size-diff items\n got %q\nwant %q", got, want)
	}
	if b := r.Body; b["deltaBytes"].(float64) != 1048576+70000-2000-500 || b["changedFiles"].(float64) != 4 ||
		b["bytes"].(float64)-b["baseBytes"].(float64) != b["deltaBytes"].(float64) || b["baseBuildId"] != base || b["buildId"] != head {
		t.Errorf("size-diff totals: %s", r.Raw)
	}
	if r := w.Do(t, "GET", "/builds/"+head+"/size-diff?base="+base+"&limit=1", w.Token, nil); len(e2e.Items(t, r)) != 1 || r.Body["changedFiles"].(float64) != 4 {
		t.Errorf("limit=1: %s", r.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/builds/"+head+"/size-diff", w.Token, nil), 400, "validation_failed")

	if dep == e2e.AWSLocal {
		return // bootstrapOrg and the artifact files below are the one-machine service's
	}
	// Another organization's complete build, as base or as the build: not found, either way.
	rival := e2e.BootstrapOrg(t, w.Server, "Rival Studio")
	if r := w.Do(t, "PATCH", "/organizations/"+rival.OrgID, rival.Token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": "9999"}},
	}); r.Status != 200 {
		t.Fatalf("link the rival: %d %s", r.Status, r.Raw)
	}
	rp := e2e.Field(t, w.Do(t, "POST", "/projects/add-repo", rival.Token, map[string]any{
		"name": "Secret", "installationId": "9999", "repoFullName": "someone-else/secret"}).Body, "id")
	rs := e2e.Field(t, w.Do(t, "POST", "/projects/"+rp+"/build-settings", rival.Token, map[string]any{
		"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main"}).Body, "id")
	theirs := e2e.Field(t, w.Do(t, "POST", "/projects/"+rp+"/build-settings/"+rs+"/trigger", rival.Token, "").Body, "buildId")
	mine := w.Token
	w.Token = rival.Token // waitEnded reads the build with w.token
	b := w.WaitEnded(t, theirs)
	w.Token = mine
	if b["status"] != "complete" {
		t.Fatalf("rival build %v: %v", b["status"], b["failureReason"])
	}
	if r := w.Do(t, "GET", "/builds/"+theirs+"/manifest", rival.Token, nil); r.Status != 200 {
		t.Fatalf("the rival's own manifest: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/builds/"+head+"/size-diff?base="+theirs, w.Token, nil), 404, "not_found")
	e2e.WantError(t, w.Do(t, "GET", "/builds/"+theirs+"/size-diff?base="+head, w.Token, nil), 404, "not_found")
	e2e.WantError(t, w.Do(t, "GET", "/builds/"+theirs+"/manifest", w.Token, nil), 404, "not_found")
	// A build completed before kiln recorded manifests: a clear 404, not a 500.
	if err := os.Remove(filepath.Join(w.Config.Data, "artifacts", w.OrgID, base+".manifest.json.gz")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/builds/" + base + "/manifest", "/builds/" + head + "/size-diff?base=" + base} {
		r := w.Do(t, "GET", path, w.Token, nil)
		e2e.WantError(t, r, 404, "not_found")
		if msg, _ := r.Body["message"].(string); !strings.Contains(msg, base+" has no size report") {
			t.Errorf("%s: message %q", path, msg)
		}
	}
}

func sortedStrings(s []string) bool { return slices.IsSorted(s) }

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func ftoa(v any) string { return strconv.FormatInt(int64(v.(float64)), 10) }
