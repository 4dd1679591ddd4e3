package buildsteps

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveDirLinks(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	for _, d := range []string{"Content/Maps", "Source"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "Source/a.cpp"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"Content/Shared": outside,        // a directory elsewhere: removed
		"Content/Maps2":  "Maps",         // a directory inside: removed too
		"Source/b.cpp":   "a.cpp",        // a file: kept
		"Source/gone":    "/nonexistent", // dangling: kept
	}
	for p, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, p)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := removeDirLinks(ws)
	if err != nil || n != 2 {
		t.Fatalf("removeDirLinks = %d, %v; want 2", n, err)
	}
	for p, want := range map[string]bool{"Content/Shared": false, "Content/Maps2": false, "Source/b.cpp": true, "Source/gone": true, "Content/Maps": true} {
		_, err := os.Lstat(filepath.Join(ws, p))
		if (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", p, err == nil, want)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("the link's target went: %v", err)
	}
}
