package packaging

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// entry is one file of a test tree and of an archive read back.
type entry struct {
	name    string // slash-separated, relative to the tree (archive: without the top dir)
	typ     byte
	mode    int64
	content []byte
	target  string
	mtime   time.Time
}

// writeTree creates entries under dir.
func writeTree(t testing.TB, dir string, entries []entry) {
	t.Helper()
	for _, e := range entries {
		p := filepath.Join(dir, filepath.FromSlash(e.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch e.typ {
		case tar.TypeDir:
			if err = os.MkdirAll(p, 0o755); err == nil {
				err = os.Chmod(p, fs.FileMode(e.mode))
			}
		case tar.TypeSymlink:
			err = os.Symlink(e.target, p)
		default:
			if err = os.WriteFile(p, e.content, 0o600); err == nil {
				err = os.Chmod(p, fs.FileMode(e.mode))
			}
		}
		if err == nil && !e.mtime.IsZero() && e.typ != tar.TypeSymlink {
			err = os.Chtimes(p, e.mtime, e.mtime)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readArchive reads a .tar.gz as a single gzip member and returns its entries in order.
func readArchive(t *testing.T, data []byte) []entry {
	t.Helper()
	br := bytes.NewReader(data)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false) // the output must be one member
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: owner %d/%d %q/%q, want 0/0 and no names", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{name: h.Name, typ: h.Typeflag, mode: h.Mode, content: content, target: h.Linkname, mtime: h.ModTime})
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		t.Fatal(err)
	}
	if err := zr.Close(); err != nil {
		t.Fatal(err)
	}
	if br.Len() != 0 {
		t.Errorf("%d bytes follow the gzip member", br.Len()) // one member, nothing after it
	}
	return out
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.NewChaCha8([32]byte{byte(seed)})
	b := make([]byte, n)
	_, _ = r.Read(b)
	return b
}

func packageTree(t *testing.T, dir, top string) ([]byte, Result) {
	t.Helper()
	var buf bytes.Buffer
	res, err := TarGz(t.Context(), dir, top, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), res
}

// mixedEntries is a tree with every kind of content, so that hints change often.
func mixedEntries() []entry {
	var es []entry
	rnd := randomBytes(5<<20, 3)
	for i := range 40 {
		es = append(es, entry{name: fmt.Sprintf("Game/Config/%02d/Settings.json", i), typ: tar.TypeReg, mode: 0o644,
			content: []byte(strings.Repeat(fmt.Sprintf(`{"key%d": "value", "n": %d}`+"\n", i, i*7), 100+i*50))})
		if i%5 == 0 {
			es = append(es, entry{name: fmt.Sprintf("Game/Content/Paks/p%02d.pak", i), typ: tar.TypeReg, mode: 0o644, content: rnd[i<<16 : i<<16+1<<20+i]})
			es = append(es, entry{name: fmt.Sprintf("Game/Binaries/lib%02d.so", i), typ: tar.TypeReg, mode: 0o755,
				content: bytes.Repeat(append([]byte("\x55\x48\x89\xe5\x48\x83\xec\x10"), rnd[i:i+24]...), 40000)})
		}
	}
	return es
}

// expectedEntries is what an archive of entries under top should hold, in order.
func expectedEntries(t *testing.T, dir string) []entry {
	t.Helper()
	const top = "MyGame-Linux-Shipping"
	var want []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := top
		if rel != "." {
			name += "/" + filepath.ToSlash(rel)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{name: name, mode: int64(fi.Mode().Perm()), mtime: fi.ModTime().Truncate(time.Second)}
		switch {
		case fi.IsDir():
			e.typ, e.name = tar.TypeDir, name+"/"
		case fi.Mode()&fs.ModeSymlink != 0:
			e.typ = tar.TypeSymlink
			e.target, _ = os.Readlink(p)
		default:
			e.typ = tar.TypeReg
			e.content, _ = os.ReadFile(p)
		}
		want = append(want, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

func compareEntries(t *testing.T, got, want []entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("archive has %d entries %v, want %d %v", len(got), entryNames(got), len(want), entryNames(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.name != w.name || g.typ != w.typ || g.target != w.target {
			t.Errorf("entry %d: %q type %c target %q, want %q type %c target %q", i, g.name, g.typ, g.target, w.name, w.typ, w.target)
		}
		if w.typ != tar.TypeSymlink && (g.mode != w.mode || !g.mtime.Equal(w.mtime)) {
			t.Errorf("%s: mode %o mtime %v, want %o %v", w.name, g.mode, g.mtime, w.mode, w.mtime)
		}
		if !bytes.Equal(g.content, w.content) {
			t.Errorf("%s: content differs (%d bytes, want %d)", w.name, len(g.content), len(w.content))
		}
	}
	for _, e := range got {
		if e.name != "MyGame-Linux-Shipping/" && !strings.HasPrefix(e.name, "MyGame-Linux-Shipping/") {
			t.Errorf("entry %q is outside the top-level directory", e.name)
		}
	}
}

func entryNames(es []entry) []string {
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.name
	}
	return names
}

// listWithTar lists the archive with the tar binary.
func listWithTar(t *testing.T, data []byte) []string {
	t.Helper()
	path := writeTemp(t, data)
	out, err := exec.Command("tar", "-tzf", path).CombinedOutput()
	if err != nil {
		t.Fatalf("tar -tzf: %v\n%s", err, out)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// gzipTest checks the archive with gzip -t.
func gzipTest(t *testing.T, data []byte) {
	t.Helper()
	if out, err := exec.Command("gzip", "-t", writeTemp(t, data)).CombinedOutput(); err != nil {
		t.Fatalf("gzip -t: %v\n%s", err, out)
	}
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.tar.gz")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
