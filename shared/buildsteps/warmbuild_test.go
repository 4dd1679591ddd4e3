package buildsteps

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestStandInEngineBuildsIncrementally runs the stand-in engine again and again in one project:
// it compiles only objects that are missing or stale (made by another engine version, or from
// other source code) and cooks only assets missing from the derived data cache kiln gives it.
func TestStandInEngineBuildsIncrementally(t *testing.T) {
	t.Parallel()
	enginesDir := t.TempDir()
	for _, v := range []string{"5.3", "5.4"} {
		if err := os.CopyFS(filepath.Join(enginesDir, v), os.DirFS("../../testdata/fake-engine")); err != nil {
			t.Fatal(err)
		}
	}
	engs := engines.Dir{Path: enginesDir}
	dir := writeProject(t, "FAKE_UAT_OBJECTS=3\nFAKE_UAT_COMPILE_MS=100\nFAKE_UAT_ASSETS=4\nFAKE_UAT_COOK_MS=100\nFAKE_UAT_PAK_MB=0\n")
	ddc := filepath.Join(dir, "DerivedDataCache")

	steps := []struct {
		name     string
		engine   string
		before   func(t *testing.T)
		upToDate int // objects found up to date, of 3
		hits     int // assets found in the cache, of 4
	}{
		{name: "first build compiles and cooks everything", engine: "5.3", upToDate: 0, hits: 0},
		{name: "second build finds every object and asset", engine: "5.3", upToDate: 3, hits: 4},
		{name: "another engine version misses everything", engine: "5.4", upToDate: 0, hits: 0},
		{name: "the first version's objects are gone, its cache entries are not", engine: "5.3", upToDate: 0, hits: 4},
		{name: "without the derived data cache only the cook is cold", engine: "5.3", upToDate: 3, hits: 0,
			before: func(t *testing.T) {
				if err := os.RemoveAll(ddc); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "changed code is compiled again, the cook stays warm", engine: "5.3", upToDate: 0, hits: 4,
			before: func(t *testing.T) {
				if err := os.WriteFile(filepath.Join(dir, "Source", "Shooter.cpp"), []byte("int Shooter;\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a change outside the code leaves the objects up to date", engine: "5.3", upToDate: 3, hits: 4,
			before: func(t *testing.T) {
				if err := os.WriteFile(filepath.Join(dir, "Source", "Version.txt"), []byte("v2"), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for i, s := range steps {
		if s.before != nil {
			s.before(t)
		}
		rec := &recorder{}
		start := time.Now()
		_, err := (&Steps{}).Build(context.Background(), BuildInput{ProjectDir: dir, UprojectPath: "Shooter.uproject",
			Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeDevelopment, RunUAT: engs.RunUAT(s.engine),
			ArchiveDir: filepath.Join(t.TempDir(), "archive")}, rec)
		if err != nil {
			t.Fatalf("step %d (%s): %v\n%s", i+1, s.name, err, rec.text())
		}
		log := rec.text()
		t.Logf("step %d (%s) took %v", i+1, s.name, time.Since(start).Round(time.Millisecond))

		if got := countsIn(t, log, `Compile: (\d+) of (\d+) objects up to date`); got != [2]int{s.upToDate, 3} {
			t.Errorf("step %d (%s): %d of %d objects up to date, want %d of 3\n%s", i+1, s.name, got[0], got[1], s.upToDate, log)
		}
		if got, want := strings.Count(log, "] Compile Module.obj"), 3-s.upToDate; got != want {
			t.Errorf("step %d (%s): %d objects compiled, want %d", i+1, s.name, got, want)
		}
		if got := countsIn(t, log, `LogDerivedDataCache: Display: Local: hits (\d+) misses (\d+) of 4 assets`); got != [2]int{s.hits, 4 - s.hits} {
			t.Errorf("step %d (%s): hits %d misses %d, want %d and %d\n%s", i+1, s.name, got[0], got[1], s.hits, 4-s.hits, log)
		}
		if got, want := strings.Count(log, "LogCook: Display: Cooking /Game/Fake/"), 4-s.hits; got != want {
			t.Errorf("step %d (%s): %d assets cooked, want %d", i+1, s.name, got, want)
		}
		if !strings.Contains(log, "Data cache path "+ddc+": ReadWrite") {
			t.Errorf("step %d (%s): the cook did not use the cache kiln gave it (%s)", i+1, s.name, ddc)
		}
	}
	for _, p := range []string{"Intermediate/Build/Linux/Shooter/Development/obj3.o", "DerivedDataCache/FakeUAT/5.3/Linux/Asset4.udd"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Error(err)
		}
	}
}

// TestStandInEngineRejectsBadCounts: a count knob that is not a whole number fails the build
// before it writes anything.
func TestStandInEngineRejectsBadCounts(t *testing.T) {
	t.Parallel()
	runUAT := installRunUAT(t)
	for _, knob := range []string{"FAKE_UAT_OBJECTS=many", "FAKE_UAT_COMPILE_MS=-1", "FAKE_UAT_ASSETS=1.5", "FAKE_UAT_COOK_MS=x"} {
		dir := writeProject(t, knob+"\nFAKE_UAT_OBJECTS=${FAKE_UAT_OBJECTS:-2}\nFAKE_UAT_ASSETS=${FAKE_UAT_ASSETS:-2}\n")
		rec := &recorder{}
		_, err := (&Steps{}).Build(context.Background(), BuildInput{ProjectDir: dir, UprojectPath: "Shooter.uproject",
			Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeDevelopment, RunUAT: runUAT,
			ArchiveDir: filepath.Join(t.TempDir(), "archive")}, rec)
		name := strings.SplitN(knob, "=", 2)[0]
		if err == nil || !strings.Contains(rec.text(), "ERROR: "+name+" must be a whole number") {
			t.Errorf("%s: err %v, log:\n%s", knob, err, rec.text())
		}
		for _, d := range []string{"Intermediate", "DerivedDataCache", "Saved"} {
			if _, err := os.Stat(filepath.Join(dir, d)); err == nil {
				t.Errorf("%s: the build wrote %s", knob, d)
			}
		}
	}
}

// countsIn returns the two numbers of the one line re matches in log.
func countsIn(t *testing.T, log, re string) [2]int {
	t.Helper()
	m := regexp.MustCompile(re).FindAllStringSubmatch(log, -1)
	if len(m) != 1 {
		return [2]int{-1, -1}
	}
	a, _ := strconv.Atoi(m[0][1])
	b, _ := strconv.Atoi(m[0][2])
	return [2]int{a, b}
}
