package buildsteps

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestCheckoutBuildPackage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sha := f.repo.Commit("main", "Ship it", "Ada", projectFiles("v1", map[string]string{"FakeUAT.env": "FAKE_UAT_PAK_MB=2\n"}))
	ctx := context.Background()
	rec := &recorder{}

	co, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: filepath.Join(t.TempDir(), "ws"), Git: f.source("main", "")}, rec)
	if err != nil || co.Commit != sha {
		t.Fatalf("checkout: %+v, %v", co, err)
	}
	archive := filepath.Join(t.TempDir(), "archive")
	bo, err := f.agent.Build(ctx, BuildInput{ProjectDir: co.Dir, UprojectPath: "Shooter.uproject", Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeDevelopment, RunUAT: f.runUAT, ArchiveDir: archive}, rec)
	if err != nil {
		t.Fatalf("build: %v\n%s", err, rec.text())
	}
	if bo.StagedDir != filepath.Join(archive, "Linux") || bo.ProjectName != "Shooter" {
		t.Fatalf("build: %+v", bo)
	}
	po, err := f.agent.Package(ctx, PackageInput{StagedDir: bo.StagedDir, TopName: "Shooter-Linux-Development", Key: "k1/b1.tar.gz"}, rec)
	if err != nil {
		t.Fatal(err)
	}

	wantStages := []Stage{StageSync, StageCompile, StageCook, StageStage, StagePackage, StageUpload}
	if !slices.Equal(rec.stages, wantStages) {
		t.Errorf("stages %v, want %v", rec.stages, wantStages)
	}
	log := rec.text()
	for _, want := range []string{"LogInit: Display: Project version: v1", "-project=" + filepath.Join(co.Dir, "Shooter.uproject"),
		"-clientconfig=Development", "-archivedirectory=" + archive, "BUILD SUCCESSFUL"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if warns := rec.at(LevelWarn); len(warns) != 1 || !strings.HasPrefix(warns[0], "LogCook: Warning:") {
		t.Errorf("warn lines %q, want the fake engine's cook warning", warns)
	}
	if errs := rec.at(LevelError); len(errs) != 0 {
		t.Errorf("error lines %q", errs)
	}

	obj, err := f.agent.Artifacts.Open(ctx, po.Key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(obj)
	obj.Close()
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(data)
	if po.Key != "k1/b1.tar.gz" || po.Size != int64(len(data)) || po.MD5 != hex.EncodeToString(sum[:]) {
		t.Errorf("package %+v; stored %d bytes with MD5 %x", po, len(data), sum)
	}
	entries := readTarGz(t, data)
	top := "Shooter-Linux-Development/"
	for name, check := range map[string]func(h *tar.Header) bool{
		top + "Shooter/Content/Paks/Shooter-Linux.pak": func(h *tar.Header) bool { return h.Size == 2<<20 },
		top + "Shooter.sh":                                     func(h *tar.Header) bool { return h.Mode&0o111 != 0 },
		top + "Shooter/Binaries/Linux/Shooter":                 func(h *tar.Header) bool { return h.Mode&0o111 != 0 },
		top + "Shooter/Version.txt":                            func(h *tar.Header) bool { return h.Size == 2 },
		top + "Shooter/Plugins/FakePlugin/FakePlugin.uplugin":  func(h *tar.Header) bool { return h.Typeflag == tar.TypeReg },
		top + "Engine/Config/BaseEngine.ini":                   func(h *tar.Header) bool { return h.Typeflag == tar.TypeReg },
		top + "Engine/Content/SlateDebug/Fonts/LastResort.ttf": func(h *tar.Header) bool { return h.Typeflag == tar.TypeReg },
	} {
		if h, ok := entries[name]; !ok || !check(h) {
			t.Errorf("tarball entry %s: %+v", name, h)
		}
	}
	for name := range entries {
		if !strings.HasPrefix(name, top) {
			t.Errorf("entry %s is outside %s", name, top)
		}
	}
}

// readTarGz lists a .tar.gz's entries by name.
func readTarGz(t *testing.T, data []byte) map[string]*tar.Header {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h
	}
}

func TestBuildServer(t *testing.T) {
	t.Parallel()
	runUAT := installRunUAT(t)
	dir := writeProject(t, "FAKE_UAT_PAK_MB=0\n")
	archive := filepath.Join(t.TempDir(), "a")
	rec := &recorder{}
	bo, err := (&Steps{}).Build(context.Background(), BuildInput{ProjectDir: dir, UprojectPath: "Shooter.uproject",
		Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeServer, RunUAT: runUAT, ArchiveDir: archive}, rec)
	if err != nil {
		t.Fatalf("%v\n%s", err, rec.text())
	}
	if bo.StagedDir != filepath.Join(archive, "LinuxServer") {
		t.Errorf("staged dir %s, want LinuxServer", bo.StagedDir)
	}
	for _, p := range []string{"ShooterServer.sh", "Shooter/Binaries/Linux/ShooterServer", "Shooter/Content/Paks/Shooter-LinuxServer.pak"} {
		if _, err := os.Stat(filepath.Join(bo.StagedDir, p)); err != nil {
			t.Error(err)
		}
	}
	log := rec.text()
	if !strings.Contains(log, "-server -noclient -serverconfig=Development") || strings.Contains(log, "-clientconfig") {
		t.Errorf("RunUAT's arguments are not a server build's:\n%s", log)
	}
}

func TestUATArgs(t *testing.T) {
	t.Parallel()
	got := strings.Join(uatArgs("/w/Game.uproject", kiln.PlatformWin64, kiln.BuildTypeShipping, "/a"), " ")
	want := "BuildCookRun -project=/w/Game.uproject -platform=Win64 -clientconfig=Shipping -build -cook -stage -pak -archive -archivedirectory=/a -unattended -utf8output -noP4"
	if got != want {
		t.Errorf("client:\n got %s\nwant %s", got, want)
	}
	got = strings.Join(uatArgs("/w/Game.uproject", kiln.PlatformLinux, kiln.BuildTypeServer, "/a"), " ")
	want = "BuildCookRun -project=/w/Game.uproject -platform=Linux -server -noclient -serverconfig=Development -build -cook -stage -pak -archive -archivedirectory=/a -unattended -utf8output -noP4"
	if got != want {
		t.Errorf("server:\n got %s\nwant %s", got, want)
	}
}

func TestBuildFailures(t *testing.T) {
	t.Parallel()
	runUAT := installRunUAT(t)
	for _, tc := range []struct {
		name, env, uproject string
		stage               Stage
		reason              string
		errorLine           string
	}{
		{"cook fails", "FAKE_UAT_FAIL=cook\n", "Shooter.uproject", StageCook,
			"engine step failed: RunUAT exited with code 3; see the build log", "LogCook: Error: Failed to cook"},
		{"compile fails", "FAKE_UAT_FAIL=build\n", "Shooter.uproject", StageCompile,
			"engine step failed: RunUAT exited with code 3; see the build log", "ERROR: UnrealBuildTool failed"},
		{"nothing archived", "FAKE_UAT_NO_ARCHIVE=1\n", "Shooter.uproject", StagePackage,
			"no archive directory: RunUAT left nothing under the archive directory", ""},
		{"no such project file", "", "Other/Other.uproject", StageCompile,
			"project file Other/Other.uproject not found in the checkout", ""},
		{"project file outside the checkout", "", "../Shooter.uproject", StageCompile,
			`project file "../Shooter.uproject" is not a .uproject inside the repository`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			_, err := (&Steps{}).Build(context.Background(), BuildInput{ProjectDir: writeProject(t, tc.env), UprojectPath: tc.uproject,
				Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeDevelopment, RunUAT: runUAT, ArchiveDir: t.TempDir()}, rec)
			var fl *Failure
			if !errors.As(err, &fl) {
				t.Fatalf("err %v, want a *Failure", err)
			}
			if fl.Stage != tc.stage || fl.Reason != tc.reason {
				t.Errorf("failure %s %q, want %s %q", fl.Stage, fl.Reason, tc.stage, tc.reason)
			}
			errs := rec.at(LevelError)
			if len(errs) == 0 || errs[len(errs)-1] != tc.reason {
				t.Errorf("error lines %q, want the reason last", errs)
			}
			if tc.errorLine != "" && !slices.ContainsFunc(errs, func(l string) bool { return strings.HasPrefix(l, tc.errorLine) }) {
				t.Errorf("error lines %q lack the engine's %q", errs, tc.errorLine)
			}
		})
	}

	// Caller mistakes are plain errors.
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "leftover"), nil, 0o644)
	for name, in := range map[string]BuildInput{
		"archive dir not empty": {ProjectDir: writeProject(t, ""), UprojectPath: "Shooter.uproject", Platform: kiln.PlatformLinux,
			BuildType: kiln.BuildTypeDevelopment, RunUAT: runUAT, ArchiveDir: full},
		"bad platform": {ProjectDir: writeProject(t, ""), UprojectPath: "Shooter.uproject", Platform: "Amiga",
			BuildType: kiln.BuildTypeDevelopment, RunUAT: runUAT, ArchiveDir: t.TempDir()},
	} {
		_, err := (&Steps{}).Build(context.Background(), in, &recorder{})
		var fl *Failure
		if err == nil || errors.As(err, &fl) {
			t.Errorf("%s: err %v, want a plain error", name, err)
		}
	}
}
