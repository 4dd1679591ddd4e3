package packaging

import (
	"archive/tar"
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/manifest"
)

// TestTarGzManifest checks that the manifest lists exactly the regular files of the archive, with
// their sizes, sorted by path, and that the archive is the one TarGz writes.
func TestTarGzManifest(t *testing.T) {
	tests := []struct {
		name    string
		entries []entry
	}{
		{"empty dir", nil},
		{"a dir sorts after a file that extends its name", []entry{
			{name: "a/b", typ: tar.TypeReg, mode: 0o644, content: []byte("in a")},
			{name: "a.txt", typ: tar.TypeReg, mode: 0o644, content: []byte("next to a")},
			{name: "a-z", typ: tar.TypeReg, mode: 0o644},
		}},
		{"dirs and symlinks are not files", []entry{
			{name: "Engine/Empty", typ: tar.TypeDir, mode: 0o755},
			{name: "Game/Binaries/Linux/libGame.so", typ: tar.TypeReg, mode: 0o755, content: randomBytes(3000, 4)},
			{name: "Game/Binaries/Linux/libGame.so.1", typ: tar.TypeSymlink, target: "libGame.so"},
		}},
		{"mixed", mixedEntries()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.entries)
			var buf bytes.Buffer
			res, files, err := TarGzManifest(t.Context(), dir, "MyGame-Linux-Shipping", &buf)
			if err != nil {
				t.Fatal(err)
			}
			want := []manifest.Entry{}
			for _, e := range readArchive(t, buf.Bytes()) {
				if e.typ == tar.TypeReg {
					want = append(want, manifest.Entry{Path: strings.TrimPrefix(e.name, "MyGame-Linux-Shipping/"), Size: int64(len(e.content))})
				}
			}
			manifest.Sort(want)
			if !reflect.DeepEqual(files, want) {
				t.Errorf("manifest\n got %v\nwant %v (the archive's regular files)", files, want)
			}
			if !slices.IsSortedFunc(files, func(a, b manifest.Entry) int { return strings.Compare(a.Path, b.Path) }) {
				t.Errorf("manifest not sorted: %v", files)
			}
			plain, plainRes := packageTree(t, dir, "MyGame-Linux-Shipping")
			if res != plainRes || !bytes.Equal(plain, buf.Bytes()) {
				t.Errorf("TarGzManifest wrote %+v, TarGz %+v", res, plainRes)
			}
		})
	}
}
