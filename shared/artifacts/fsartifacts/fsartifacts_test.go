package fsartifacts

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/artifactstest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestContract(t *testing.T) {
	artifactstest.Run(t, func(t *testing.T) artifacts.Store {
		s, err := New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// files lists the files under dir, relative and slash-separated.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPartialFilesOfACrashAreRemoved(t *testing.T) {
	dir := t.TempDir()
	// What a crash in the middle of Puts leaves: temporary files next to the artifacts.
	for name, data := range map[string]string{
		"k1/b1.tar.gz":                 "whole",
		"k1/.partial-123456":           "half an artifact",
		".partial-99":                  "half",
		"k2/deep/.partial-1":           "",
		"k2/deep/b2.tar.gz":            "whole too",
		"k2/deep/not.partial-1.tar.gz": "an artifact whose name merely contains the word",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(files(t, dir), " ")
	if want := "k1/b1.tar.gz k2/deep/b2.tar.gz k2/deep/not.partial-1.tar.gz"; got != want {
		t.Errorf("files after New: %s, want %s", got, want)
	}
	// A partial file is never an artifact, even by its own name.
	if _, err := s.Open(t.Context(), "k1/.partial-123456"); !errors.Is(err, artifacts.ErrInvalidKey) {
		t.Errorf("Open of a partial file = %v, want ErrInvalidKey", err)
	}
}

func TestPutLeavesNoPartialFile(t *testing.T) {
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var partial []string
	err = s.Put(t.Context(), "k/b.tar.gz", func(w io.Writer) error {
		if _, err := w.Write([]byte("data")); err != nil {
			return err
		}
		partial = files(t, dir) // while writing: only the temporary file exists
		return errors.New("build failed")
	})
	if err == nil {
		t.Fatal("Put succeeded")
	}
	if len(partial) != 1 || !strings.HasPrefix(filepath.Base(partial[0]), partialPrefix) {
		t.Errorf("files while writing: %v, want one %s* file", partial, partialPrefix)
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("files after a failed Put: %v", got)
	}
	if err := s.Put(t.Context(), "k/b.tar.gz", func(w io.Writer) error { _, err := w.Write([]byte("ok")); return err }); err != nil {
		t.Fatal(err)
	}
	if got := files(t, dir); len(got) != 1 || got[0] != "k/b.tar.gz" {
		t.Errorf("files after a Put: %v, want k/b.tar.gz", got)
	}
	fi, err := os.Stat(filepath.Join(dir, "k", "b.tar.gz"))
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("artifact file: %v, %v; want mode 0640", fi.Mode(), err)
	}
}

func TestOpenDirectoryIsNotFound(t *testing.T) {
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "k", "dir.tar.gz"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(t.Context(), "k/dir.tar.gz"); !kiln.IsCode(err, kiln.ENotFound) {
		t.Errorf("Open of a directory = %v, want not_found", err)
	}
	if err := s.Delete(t.Context(), "k/dir.tar.gz"); err != nil {
		t.Errorf("Delete of a directory = %v, want nil (no artifact)", err)
	}
}

func TestListContract(t *testing.T) {
	artifactstest.RunList(t, func(t *testing.T) artifactstest.ListStore {
		s, err := New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
