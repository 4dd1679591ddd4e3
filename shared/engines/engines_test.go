package engines

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"5.3", "5.4.1", "notaversion"} {
		p := filepath.Join(root, v, RunUATPath)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "5.5"), 0o755); err != nil { // no RunUAT.sh
		t.Fatal(err)
	}
	d := Dir{Path: root}
	versions, err := d.Versions(context.Background())
	if err != nil || len(versions) != 2 || versions[0] != "5.3" || versions[1] != "5.4.1" {
		t.Fatalf("versions %v, %v", versions, err)
	}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"5.3", "5.3", true},
		{"5.3.2", "5.3", true},
		{"5.4.1", "5.4.1", true},
		{"5.4", "", false},
		{"5.4.2", "", false},
		{"5.5", "", false},
		{"5", "", false},
	}
	for _, tt := range tests {
		got, ok, err := d.Resolve(context.Background(), tt.in)
		if err != nil || got != tt.want || ok != tt.ok {
			t.Errorf("Resolve(%s) = %q %v %v, want %q %v", tt.in, got, ok, err, tt.want, tt.ok)
		}
	}
	if v, err := (Dir{Path: filepath.Join(root, "missing")}).Versions(context.Background()); err != nil || len(v) != 0 {
		t.Errorf("missing dir: %v %v", v, err)
	}
}

func TestScanReportsEnginesAndProblems(t *testing.T) {
	root := t.TempDir()
	install := func(path string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(root, path, RunUATPath)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	install("5.3", 0o755)
	install("5.4/fake-engine", 0o755) // copied one level too deep
	install("5.5", 0o644)             // not executable
	install("UE_5.6", 0o755)          // not a version name
	found, problems, err := Dir{Path: root}.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, f := range found {
		versions = append(versions, f.Version)
		if !filepath.IsAbs(f.RunUAT) {
			t.Errorf("RunUAT path %q is not absolute", f.RunUAT)
		}
	}
	if strings.Join(versions, ",") != "5.3,5.5" {
		t.Errorf("found %v, want 5.3 and 5.5", versions)
	}
	want := map[string]string{"5.4": "fake-engine/", "5.5": "not executable", "UE_5.6": "not named by an engine version"}
	if len(problems) != len(want) {
		t.Errorf("problems %+v, want %d", problems, len(want))
	}
	for _, p := range problems {
		if w, ok := want[filepath.Base(p.Path)]; !ok || !strings.Contains(p.Reason, w) {
			t.Errorf("problem %+v, want one mentioning %q", p, w)
		}
	}
	_, problems, err = Dir{Path: filepath.Join(root, "missing")}.Scan(context.Background())
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0].Reason, "does not exist") {
		t.Errorf("missing directory: %+v, %v", problems, err)
	}
}

func TestRunUATFile(t *testing.T) {
	for _, tc := range []struct{ goos, want string }{
		{"linux", "Engine/Build/BatchFiles/RunUAT.sh"},
		{"darwin", "Engine/Build/BatchFiles/RunUAT.sh"},
		{"windows", "Engine/Build/BatchFiles/RunUAT.bat"},
	} {
		if got := RunUATFile(tc.goos); got != tc.want {
			t.Errorf("RunUATFile(%q) = %q, want %q", tc.goos, got, tc.want)
		}
	}
	if got, want := (Dir{Path: "engines"}).RunUAT("5.4"), filepath.Join("engines", "5.4", filepath.FromSlash(RunUATPath)); got != want {
		t.Errorf("RunUAT = %q, want %q", got, want)
	}
}
