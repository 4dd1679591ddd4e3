package buildcache

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/kilnbuild/kiln/shared/nofollow"
)

// What a hostile build can leave in its project's cached directories, and what the cache must
// then do: neither save what lies outside them, nor write, nor remove there.

// victim is another organization's project directory, beside the attacker's.
func victim(t *testing.T) string {
	t.Helper()
	v := filepath.Join(t.TempDir(), "victim")
	makeTree(t, v, []node{{name: "Intermediate/secret.o", mode: 0o644, modTime: t1, data: []byte("proprietary")}})
	return v
}

func archiveNames(t *testing.T, data []byte) []string {
	t.Helper()
	dec, err := zstd.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var names []string
	tr := tar.NewReader(dec)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
	}
}

func TestSaveLeavesOutWhatLinksReach(t *testing.T) {
	v := victim(t)
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, root string)
	}{
		{"a listed directory linked to another workspace", func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "Intermediate")))
			must(t, os.Symlink(filepath.Join(v, "Intermediate"), filepath.Join(root, "Intermediate")))
		}},
		{"a linked subdirectory", func(t *testing.T, root string) {
			must(t, os.Symlink(filepath.Join(v, "Intermediate"), filepath.Join(root, "Intermediate/Stolen")))
		}},
		{"a relative link", func(t *testing.T, root string) {
			rel, _ := filepath.Rel(filepath.Join(root, "Intermediate"), filepath.Join(v, "Intermediate", "secret.o"))
			must(t, os.Symlink(rel, filepath.Join(root, "Intermediate/secret.o")))
		}},
		{"a hard link", func(t *testing.T, root string) {
			must(t, os.Link(filepath.Join(v, "Intermediate", "secret.o"), filepath.Join(root, "Intermediate/secret.o")))
		}},
		{"a FIFO", func(t *testing.T, root string) {
			if err := mkfifo(filepath.Join(root, "Intermediate/secret.o")); errors.Is(err, errors.ErrUnsupported) {
				t.Skip("no FIFOs")
			} else {
				must(t, err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := projectWith(t, "own")
			tc.plant(t, root)
			var buf bytes.Buffer
			st, err := Write(t.Context(), &buf, opened(t, root), DefaultDirs)
			if err != nil {
				t.Fatal(err)
			}
			if st.Skipped == 0 {
				t.Errorf("nothing was skipped: %+v", st)
			}
			for _, n := range archiveNames(t, buf.Bytes()) {
				if filepath.Base(n) == "secret.o" || filepath.Base(filepath.Dir(n)) == "Stolen" {
					t.Errorf("the archive holds %s, reached through a link", n)
				}
			}
		})
	}
}

func TestRestoreAndCleanNeverReachThroughLinks(t *testing.T) {
	src := projectWith(t, "planted")
	var buf bytes.Buffer
	if _, err := Write(t.Context(), &buf, opened(t, src), DefaultDirs); err != nil {
		t.Fatal(err)
	}
	archive := buf.Bytes()
	for _, tc := range []struct {
		name string
		op   func(root *nofollow.Dir) error
	}{
		{"restore", func(root *nofollow.Dir) error {
			_, err := Read(t.Context(), bytes.NewReader(archive), root, DefaultDirs)
			return err
		}},
		{"clean", func(root *nofollow.Dir) error { return RemoveDirs(root, DefaultDirs) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := victim(t)
			root := filepath.Join(t.TempDir(), "attacker")
			must(t, os.MkdirAll(root, 0o755))
			must(t, os.Symlink(filepath.Join(v, "Intermediate"), filepath.Join(root, "Intermediate")))
			must(t, os.WriteFile(filepath.Join(root, "DerivedDataCache"), []byte("a file for a directory"), 0o644))
			if err := tc.op(opened(t, root)); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(filepath.Join(v, "Intermediate"))
			if err != nil || len(entries) != 1 || entries[0].Name() != "secret.o" {
				t.Fatalf("the other workspace's Intermediate changed: %v %v", entries, err)
			}
			if fi, err := os.Lstat(filepath.Join(root, "Intermediate")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				t.Error("the link is still there")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
