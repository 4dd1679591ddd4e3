package buildcache

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// node is one file or directory of a test tree.
type node struct {
	name    string // slash-separated, relative to the project
	dir     bool
	mode    fs.FileMode
	modTime time.Time
	data    []byte
}

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)}).Read(b)
	return b
}

// makeTree creates the nodes under root, parents first, then sets modes and times deepest first.
func makeTree(t testing.TB, root string, nodes []node) {
	t.Helper()
	for _, n := range nodes {
		p := filepath.Join(root, filepath.FromSlash(n.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if n.dir {
			err = os.MkdirAll(p, 0o755)
		} else {
			err = os.WriteFile(p, n.data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		p := filepath.Join(root, filepath.FromSlash(n.name))
		if err := os.Chmod(p, n.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, n.modTime, n.modTime); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot describes everything under root/dirs: type, mode, time and content hash by name.
func snapshot(t testing.TB, root string, dirs []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range dirs {
		top := filepath.Join(root, filepath.FromSlash(d))
		err := filepath.WalkDir(top, func(p string, de fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == top {
				return nil
			}
			if err != nil {
				return err
			}
			fi, err := de.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			desc := fmt.Sprintf("%v %s", fi.Mode(), fi.ModTime().UTC().Format(time.RFC3339Nano))
			if fi.Mode().IsRegular() {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				desc += fmt.Sprintf(" %x", sha256.Sum256(data))
			}
			out[filepath.ToSlash(rel)] = desc
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

var (
	t1 = time.Date(2024, 3, 1, 10, 0, 0, 123456789, time.UTC)
	t2 = time.Date(2025, 7, 9, 23, 59, 58, 987654321, time.UTC)
)

func TestRoundTripKeepsFilesModesAndTimes(t *testing.T) {
	src := t.TempDir()
	nodes := []node{
		{name: "Intermediate", dir: true, mode: 0o755, modTime: t1},
		{name: "Intermediate/Build", dir: true, mode: 0o750, modTime: t2},
		{name: "Intermediate/Build/Module.o", mode: 0o644, modTime: t1, data: []byte("object code")},
		{name: "Intermediate/Build/tool.sh", mode: 0o755, modTime: t2, data: []byte("#!/bin/sh\n")},
		{name: "Intermediate/Build/readonly.txt", mode: 0o444, modTime: t2, data: []byte("ro")},
		{name: "Intermediate/Build/empty.txt", mode: 0o600, modTime: t1, data: nil},
		{name: "Intermediate/Empty", dir: true, mode: 0o700, modTime: t2},
		{name: "Intermediate/ReadOnlyDir", dir: true, mode: 0o555, modTime: t1},
		{name: "Intermediate/ReadOnlyDir/f", mode: 0o644, modTime: t2, data: []byte("f")},
		{name: "DerivedDataCache", dir: true, mode: 0o755, modTime: t2},
		{name: "DerivedDataCache/ab/cd/big.udd", mode: 0o644, modTime: t1, data: randomBytes(3<<20+7, 1)},
		{name: "DerivedDataCache/ab", dir: true, mode: 0o755, modTime: t1},
		{name: "Saved/Logs/build.log", mode: 0o644, modTime: t1, data: []byte("not cached")},
	}
	makeTree(t, src, nodes)
	if err := os.Symlink("Build/Module.o", filepath.Join(src, "Intermediate", "link")); err != nil {
		t.Fatal(err)
	}
	dirs := []string{"Intermediate", "DerivedDataCache", "Missing"}
	var buf bytes.Buffer
	wst, err := Write(t.Context(), &buf, opened(t, src), dirs)
	if err != nil {
		t.Fatal(err)
	}
	if wst.Files != 6 || wst.Skipped != 1 || wst.Bytes != 3<<20+7+11+10+2+1 {
		t.Errorf("Write stats %+v, want 6 files, 1 skipped (the symlink)", wst)
	}

	// The destination has a stale file in a cached dir, and a source file that must stay.
	dst := t.TempDir()
	makeTree(t, dst, []node{
		{name: "Intermediate/stale.o", mode: 0o644, modTime: t1, data: []byte("stale")},
		{name: "Source/Game.cpp", mode: 0o644, modTime: t2, data: []byte("source")},
	})
	rst, err := Read(t.Context(), &buf, opened(t, dst), dirs)
	if err != nil {
		t.Fatal(err)
	}
	if rst.Files != wst.Files || rst.Bytes != wst.Bytes || rst.Dirs != wst.Dirs {
		t.Errorf("Read stats %+v, Write stats %+v", rst, wst)
	}
	want := snapshot(t, src, dirs)
	delete(want, "Intermediate/link")
	got := snapshot(t, dst, dirs)
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: restored %q, want %q", name, got[name], w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: restored, but not in the source (a restore must replace, not merge)", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "Source", "Game.cpp")); err != nil {
		t.Errorf("a directory outside the cache was touched: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dst, "Saved")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Saved (not a cached dir) was restored: %v", err)
	}
}

// entry is one entry of a hand-made archive.
type entry struct {
	hdr  tar.Header
	data string
}

func file(name, data string) entry {
	return entry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: t1}, data}
}

func rawArchive(t *testing.T, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(enc)
	for _, e := range entries {
		if err := tw.WriteHeader(&e.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// newProject makes <tmp>/proj with an old cache and a source file, and returns both paths.
func newProject(t *testing.T) (parent, root string) {
	parent = t.TempDir()
	root = filepath.Join(parent, "proj")
	makeTree(t, root, []node{
		{name: "Intermediate/old.o", mode: 0o644, modTime: t1, data: []byte("old")},
		{name: "DerivedDataCache/old.udd", mode: 0o644, modTime: t1, data: []byte("old")},
		{name: "Source/Game.cpp", mode: 0o644, modTime: t1, data: []byte("source")},
	})
	return parent, root
}

// wantCold checks that after a failed Read the cached dirs are gone, the rest is untouched and
// nothing was written beside the project.
func wantCold(t *testing.T, parent, root string) {
	t.Helper()
	for _, d := range DefaultDirs {
		if _, err := os.Lstat(filepath.Join(root, d)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left behind after a failed restore (%v)", d, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(root, "Source", "Game.cpp")); err != nil || string(data) != "source" {
		t.Errorf("Source/Game.cpp changed: %q, %v", data, err)
	}
	var outside []string
	filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != parent && p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
			outside = append(outside, p)
		}
		return err
	})
	if len(outside) > 0 {
		t.Errorf("written outside the project: %v", outside)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("project holds %d entries, want only Source", len(entries))
	}
}

func TestReadRefusesUnsafeEntries(t *testing.T) {
	ok := file("Intermediate/ok.o", "fine") // extracted before the bad entry
	tests := []struct {
		name  string
		entry entry
	}{
		{"parent", file("../evil", "x")},
		{"parent inside", file("Intermediate/../../evil", "x")},
		{"parent to a sibling", file("Intermediate/../Source/Game.cpp", "x")},
		{"absolute", file("/tmp/evil", "x")},
		{"outside the dirs", file("Source/Game.cpp", "x")},
		{"dir prefix only", file("IntermediateX/a", "x")},
		{"backslash", file(`Intermediate\..\..\evil`, "x")},
		{"dot", file("Intermediate/./a", "x")},
		{"empty segment", file("Intermediate//a", "x")},
		{"duplicate", file("Intermediate/ok.o", "again")},
		{"symlink escaping", entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "Intermediate/l", Linkname: "../../evil", ModTime: t1}}},
		{"symlink inside", entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "Intermediate/l", Linkname: "ok.o", ModTime: t1}}},
		{"hard link", entry{hdr: tar.Header{Typeflag: tar.TypeLink, Name: "Intermediate/h", Linkname: "/etc/passwd", ModTime: t1}}},
		{"char device", entry{hdr: tar.Header{Typeflag: tar.TypeChar, Name: "Intermediate/null", Devmajor: 1, Devminor: 3, ModTime: t1}}},
		{"block device", entry{hdr: tar.Header{Typeflag: tar.TypeBlock, Name: "Intermediate/sda", Devmajor: 8, ModTime: t1}}},
		{"fifo", entry{hdr: tar.Header{Typeflag: tar.TypeFifo, Name: "Intermediate/fifo", ModTime: t1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent, root := newProject(t)
			archive := rawArchive(t, []entry{ok, tc.entry})
			_, err := Read(t.Context(), bytes.NewReader(archive), opened(t, root), DefaultDirs)
			if err == nil {
				t.Fatal("Read accepted the archive")
			}
			wantCold(t, parent, root)
		})
	}
}

func TestReadRefusesBrokenArchives(t *testing.T) {
	src := t.TempDir()
	makeTree(t, src, []node{
		{name: "Intermediate/a.o", mode: 0o644, modTime: t1, data: randomBytes(1<<20, 2)},
		{name: "Intermediate/b.o", mode: 0o644, modTime: t1, data: bytes.Repeat([]byte("compressible "), 100_000)},
		{name: "DerivedDataCache/c.udd", mode: 0o644, modTime: t1, data: randomBytes(300_000, 3)},
	})
	var buf bytes.Buffer
	if _, err := Write(t.Context(), &buf, opened(t, src), DefaultDirs); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	flip := func(at int) []byte {
		b := bytes.Clone(good)
		b[at] ^= 0x40
		return b
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"not zstd", []byte("this is not a cache archive at all")},
		{"truncated to half", good[:len(good)/2]},
		{"truncated by one byte", good[:len(good)-1]},
		{"truncated checksum", good[:len(good)-4]},
		{"byte flipped early", flip(len(good) / 10)},
		{"byte flipped late", flip(len(good) - 100)},
		{"trailing garbage", append(bytes.Clone(good), "garbage"...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent, root := newProject(t)
			if _, err := Read(t.Context(), bytes.NewReader(tc.data), opened(t, root), DefaultDirs); err == nil {
				t.Fatal("Read accepted the archive")
			}
			wantCold(t, parent, root)
		})
	}
	// The intact archive restores.
	_, root := newProject(t)
	if _, err := Read(t.Context(), bytes.NewReader(good), opened(t, root), DefaultDirs); err != nil {
		t.Fatalf("intact archive: %v", err)
	}
}

func TestBadDirs(t *testing.T) {
	for _, dirs := range [][]string{
		nil,
		{""},
		{"/abs"},
		{"../up"},
		{"a/../b"},
		{"./a"},
		{`a\b`},
		{"Intermediate", "Intermediate"},
		{"Saved", "Saved/Cache"},
	} {
		root := t.TempDir()
		if _, err := Write(t.Context(), io.Discard, opened(t, root), dirs); err == nil {
			t.Errorf("Write with dirs %q succeeded", dirs)
		}
		if _, err := Read(t.Context(), bytes.NewReader(nil), opened(t, root), dirs); err == nil {
			t.Errorf("Read with dirs %q succeeded", dirs)
		}
		if _, err := New(nil, dirs); dirs != nil && err == nil {
			t.Errorf("New with dirs %q succeeded", dirs)
		}
	}
}
