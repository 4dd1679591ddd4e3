package nofollow_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/kilnbuild/kiln/shared/nofollow"
)

// tree makes a workspace with a real project directory, and beside it an "outside" directory
// (another organization's workspace) that links in the workspace point at.
func tree(t *testing.T) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{"ws/Game/Intermediate", "outside/Intermediate"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(ws, "Game/Intermediate/own.o"), "own")
	write(t, filepath.Join(outside, "Intermediate/secret.o"), "secret")
	symlink(t, outside, filepath.Join(ws, "Abs"))      // absolute, out
	symlink(t, "../outside", filepath.Join(ws, "Rel")) // relative, out
	symlink(t, "Game", filepath.Join(ws, "Inside"))    // relative, in
	symlink(t, "../outside/Intermediate", filepath.Join(ws, "Game/Linked"))
	symlink(t, "own.o", filepath.Join(ws, "Game/Intermediate/link.o"))
	write(t, filepath.Join(ws, "File"), "a file where a directory was")
	return ws, outside
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Skipf("symlinks: %v", err)
	}
}

func TestOpenDirRefusesEveryLink(t *testing.T) {
	ws, _ := tree(t)
	d, err := nofollow.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, tc := range []struct {
		rel  string
		want error
	}{
		{"Game", nil},
		{"Game/Intermediate", nil},
		{".", nil},
		{"Abs", nofollow.ErrSymlink},
		{"Abs/Intermediate", nofollow.ErrSymlink},
		{"Rel/Intermediate", nofollow.ErrSymlink},
		{"Inside", nofollow.ErrSymlink}, // even a link that stays inside
		{"Inside/Intermediate", nofollow.ErrSymlink},
		{"Game/Linked", nofollow.ErrSymlink},
		{"File", nofollow.ErrNotDir},
		{"../outside", nofollow.ErrName},
		{"Game/../Game", nofollow.ErrName},
		{"/etc", nofollow.ErrName},
		{"Missing", fs.ErrNotExist},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			sub, err := d.OpenDir(tc.rel)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("OpenDir(%q): %v", tc.rel, err)
				}
				sub.Close()
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("OpenDir(%q) = %v, want %v", tc.rel, err, tc.want)
			}
		})
	}
}

func TestOpenRefusesALinkedDirectory(t *testing.T) {
	ws, _ := tree(t)
	if _, err := nofollow.Open(filepath.Join(ws, "Rel")); !errors.Is(err, nofollow.ErrSymlink) {
		t.Fatalf("Open(link) = %v, want ErrSymlink", err)
	}
}

func TestOpenFile(t *testing.T) {
	ws, _ := tree(t)
	d, err := nofollow.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, fi, err := d.OpenFile("Game/Intermediate/own.o")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi.Size() != 3 {
		t.Fatalf("size %d", fi.Size())
	}
	for rel, want := range map[string]error{
		"Game/Intermediate/link.o":  nofollow.ErrSymlink,
		"Rel/Intermediate/secret.o": nofollow.ErrSymlink,
		"Game/Linked/secret.o":      nofollow.ErrSymlink,
		"Game/Intermediate":         nofollow.ErrNotRegular,
	} {
		if _, _, err := d.OpenFile(rel); !errors.Is(err, want) {
			t.Errorf("OpenFile(%q) = %v, want %v", rel, err, want)
		}
	}
}

func TestOpenFileRefusesAPipeWithoutWaiting(t *testing.T) {
	ws, _ := tree(t)
	if err := mkfifo(filepath.Join(ws, "Game/Intermediate/pipe.o")); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no FIFOs")
	} else if err != nil {
		t.Fatal(err)
	}
	d, err := nofollow.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.OpenFile("Game/Intermediate/pipe.o"); !errors.Is(err, nofollow.ErrNotRegular) {
		t.Fatalf("OpenFile(fifo) = %v, want ErrNotRegular", err)
	}
}

func TestRemoveAllNeverFollows(t *testing.T) {
	ws, outside := tree(t)
	d, err := nofollow.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Through a linked component: refused, the other side untouched.
	if err := d.RemoveAll("Rel/Intermediate"); !errors.Is(err, nofollow.ErrSymlink) {
		t.Fatalf("RemoveAll through a link = %v, want ErrSymlink", err)
	}
	// A link itself: the link goes, not what it points at.
	if err := d.RemoveAll("Game/Linked"); err != nil {
		t.Fatal(err)
	}
	if err := d.RemoveAll("Game"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "Intermediate/secret.o")); err != nil {
		t.Fatalf("the other workspace lost its file: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "Game")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Game still there: %v", err)
	}
	if err := d.RemoveAll("Missing/Deeper"); err != nil {
		t.Fatalf("a missing path: %v", err)
	}
}

func TestMkdirAllAndCreateStayInside(t *testing.T) {
	ws, outside := tree(t)
	d, err := nofollow.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.MkdirAll("Game/Linked/planted", 0o755); !errors.Is(err, nofollow.ErrSymlink) {
		t.Fatalf("MkdirAll through a link = %v", err)
	}
	if _, err := d.Create("Rel/Intermediate/planted.o", 0o644); !errors.Is(err, nofollow.ErrSymlink) {
		t.Fatalf("Create through a link = %v", err)
	}
	if _, err := d.Create("Game/Intermediate/link.o", 0o644); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over a link = %v, want ErrExist", err)
	}
	if err := d.Chmod("Game/Intermediate/link.o", 0o777); !errors.Is(err, nofollow.ErrSymlink) {
		t.Fatalf("Chmod of a link = %v", err)
	}
	if err := d.MkdirAll("Game/New/Deeper", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := d.Create("Game/New/Deeper/x.o", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	entries, err := os.ReadDir(filepath.Join(outside, "Intermediate"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("the other workspace changed: %v %v", entries, err)
	}
}
