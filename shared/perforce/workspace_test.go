package perforce

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func syncState() fakeState {
	st := defaultState()
	st.Files = map[string]string{
		"//game/main/Shooter/Shooter.uproject":   `{"EngineAssociation": "5.3"}`,
		"//game/main/Shooter/Source/Shooter.cpp": "int x;",
		"//game/main/Shooter/Content/Old.uasset": "old",
		"//game/dev/Other.txt":                   "not in main",
	}
	st.Changes = []fakeChange{
		{Change: 10, Path: "//game/main/...", Desc: "first", Files: map[string]string{"//game/main/Shooter/Source/Shooter.cpp": "int x = 10;"}},
		{Change: 11, Path: "//game/main/...", Desc: "second", Files: map[string]string{"//game/main/Shooter/Content/New.uasset": "new"},
			Deleted: []string{"//game/main/Shooter/Content/Old.uasset"}},
		{Change: 12, Path: "//game/main/...", Desc: "not yet", Pending: true, Files: map[string]string{"//game/main/Shooter/Source/Shooter.cpp": "pending"}},
	}
	return st
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestSyncIsIncrementalAndFollowsChangelists(t *testing.T) {
	ctx := context.Background()
	c, logPath := setup(t, syncState())
	if _, err := c.Trust(ctx); err != nil {
		t.Fatal(err)
	}
	ws := Workspace{Name: "kiln-p1-abc", Root: filepath.Join(t.TempDir(), "ws"), Stream: "//game/main"}
	if err := c.SaveWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveWorkspace(ctx, ws); err != nil { // saving it again is harmless
		t.Fatal(err)
	}
	if ch, err := c.LatestChangeIn(ctx, ws); err != nil || ch != "11" { // 12 is pending
		t.Fatalf("LatestChangeIn = %q, %v", ch, err)
	}

	steps := []struct {
		change    string
		wantFiles int
		wantTree  map[string]string
	}{
		{"10", 3, map[string]string{
			"Shooter/Shooter.uproject": `{"EngineAssociation": "5.3"}`, "Shooter/Source/Shooter.cpp": "int x = 10;", "Shooter/Content/Old.uasset": "old"}},
		{"10", 0, nil}, // nothing changed: nothing transferred
		{"11", 2, map[string]string{ // one added, one deleted; the rest stays
			"Shooter/Shooter.uproject": `{"EngineAssociation": "5.3"}`, "Shooter/Source/Shooter.cpp": "int x = 10;", "Shooter/Content/New.uasset": "new"}},
		{"10", 2, map[string]string{ // back in time
			"Shooter/Shooter.uproject": `{"EngineAssociation": "5.3"}`, "Shooter/Source/Shooter.cpp": "int x = 10;", "Shooter/Content/Old.uasset": "old"}},
	}
	for _, s := range steps {
		var lines []string
		n, err := c.Sync(ctx, ws, s.change, false, func(l string) { lines = append(lines, l) })
		if err != nil || n != s.wantFiles || len(lines) != n {
			t.Fatalf("Sync @%s = %d (%q), %v; want %d files", s.change, n, lines, err, s.wantFiles)
		}
		if s.wantTree != nil {
			if got := readTree(t, ws.Root); !mapsEqual(got, s.wantTree) {
				t.Errorf("after sync @%s the workspace holds %q, want %q", s.change, got, s.wantTree)
			}
		}
	}

	// A root that lost its files while the server still records them: a plain sync transfers
	// nothing, a forced one everything.
	if err := os.RemoveAll(ws.Root); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Sync(ctx, ws, "10", false, nil); err != nil || n != 0 {
		t.Fatalf("plain sync of a wiped root = %d, %v", n, err)
	}
	if n, err := c.Sync(ctx, ws, "10", true, nil); err != nil || n != 3 || len(readTree(t, ws.Root)) != 3 {
		t.Fatalf("forced sync of a wiped root = %d, %v", n, err)
	}

	for _, l := range readLog(t, logPath) {
		if slices.Contains(l.Argv, testTicket) {
			t.Errorf("ticket in argv: %q", l.Argv)
		}
		if slices.Contains(l.Argv, "sync") && (!slices.Contains(l.Argv, ws.Name) || !strings.HasPrefix(l.Argv[len(l.Argv)-1], "//"+ws.Name+"/...@")) {
			t.Errorf("sync not of the whole client view: %q", l.Argv)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func TestSyncErrors(t *testing.T) {
	ctx := context.Background()
	c, _ := setup(t, syncState())
	if _, err := c.Trust(ctx); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "ws")
	if err := c.SaveWorkspace(ctx, Workspace{Name: "kiln-gone", Root: root, Stream: "//game/gone"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("SaveWorkspace of a missing stream: %v, want ErrNotFound", err)
	}
	ws := Workspace{Name: "kiln-ok", Root: root, Stream: "//game/main"}
	if err := c.SaveWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sync(ctx, ws, "999", false, nil); err == nil || !strings.Contains(err.Error(), "999") {
		t.Errorf("Sync of an unknown change: %v", err)
	}
	if d, err := c.Describe(ctx, "12"); err != nil || d.Status != "pending" {
		t.Errorf("Describe pending = %+v, %v", d, err)
	}

	bad := []struct {
		name   string
		ws     Workspace
		change string
	}{
		{"option as name", Workspace{Name: "-x", Root: root, Stream: "//game/main"}, "10"},
		{"relative root", Workspace{Name: "kiln-a", Root: "ws", Stream: "//game/main"}, "10"},
		{"newline in root", Workspace{Name: "kiln-a", Root: root + "\nHost: x", Stream: "//game/main"}, "10"},
		{"wildcard stream", Workspace{Name: "kiln-a", Root: root, Stream: "//game/..."}, "10"},
		{"revision in stream", Workspace{Name: "kiln-a", Root: root, Stream: "//game/main@3"}, "10"},
		{"change not a number", ws, "10,12"},
		{"change with a leading zero", ws, "010"},
		{"no change", ws, ""},
	}
	for _, b := range bad {
		if _, err := c.Sync(ctx, b.ws, b.change, false, nil); err == nil {
			t.Errorf("%s: Sync accepted it", b.name)
		}
		if b.ws != ws {
			if err := c.SaveWorkspace(ctx, b.ws); err == nil {
				t.Errorf("%s: SaveWorkspace accepted it", b.name)
			}
		}
	}
}

func TestSyncExpiredTicket(t *testing.T) {
	ctx := context.Background()
	st := syncState()
	c, _ := setup(t, st)
	if _, err := c.Trust(ctx); err != nil {
		t.Fatal(err)
	}
	ws := Workspace{Name: "kiln-exp", Root: filepath.Join(t.TempDir(), "ws"), Stream: "//game/main"}
	if err := c.SaveWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	c.Ticket = "0000"
	if _, err := c.Sync(ctx, ws, "10", false, nil); !errors.Is(err, ErrAuth) {
		t.Errorf("Sync with a bad ticket: %v, want ErrAuth", err)
	}
}

// A classic depot path's workspace maps the directory with its own view (no Stream field): the
// server takes it without any stream, and syncs the directory's files.
func TestClassicDepotWorkspace(t *testing.T) {
	ctx := context.Background()
	st := syncState()
	st.Streams = nil
	c, _ := setup(t, st)
	if _, err := c.Trust(ctx); err != nil {
		t.Fatal(err)
	}
	ws := Workspace{Name: "kiln-p1-classic", Root: filepath.Join(t.TempDir(), "ws"), Stream: "//game/main", Classic: true}
	if err := c.SaveWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if ch, err := c.LatestChangeIn(ctx, ws); err != nil || ch != "11" {
		t.Fatalf("LatestChangeIn = %q, %v", ch, err)
	}
	if _, err := c.Sync(ctx, ws, "11", false, nil); err != nil {
		t.Fatal(err)
	}
	got := readTree(t, ws.Root)
	if got["Shooter/Content/New.uasset"] != "new" || got["Other.txt"] != "" || len(got) != 3 {
		t.Fatalf("synced %v", got)
	}
	// Without the view, the same directory is no stream.
	ws.Classic = false
	if err := c.SaveWorkspace(ctx, ws); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a stream workspace of a plain directory: %v", err)
	}
}
