package perforce

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A hostile server names the local files a sync writes: p4 must write none outside the
// workspace, whatever root or path it sends.
func TestSyncWritesNothingOutsideTheWorkspace(t *testing.T) {
	tests := []struct {
		name string
		edit func(st *fakeState, outside string)
	}{
		{"the server's own root", func(st *fakeState, outside string) { st.SyncRoot = outside }},
		{"a depot path through ..", func(st *fakeState, _ string) {
			st.Changes[0].Files["//game/main/../../escape.txt"] = "escaped"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			tmp := t.TempDir()
			outside := filepath.Join(tmp, "outside")
			st := syncState()
			tc.edit(&st, outside)
			c, logPath := setup(t, st)
			if _, err := c.Trust(ctx); err != nil {
				t.Fatal(err)
			}
			ws := Workspace{Name: "kiln-ws", Root: filepath.Join(tmp, "a", "b", "ws"), Stream: "//game/main"}
			if err := os.MkdirAll(ws.Root, 0o755); err != nil { // as the agent does
				t.Fatal(err)
			}
			if err := c.SaveWorkspace(ctx, ws); err != nil {
				t.Fatal(err)
			}
			_, err := c.Sync(ctx, ws, "10", false, nil)
			if !errors.Is(err, ErrOutsideWorkspace) {
				t.Fatalf("Sync = %v, want ErrOutsideWorkspace", err)
			}
			// Nothing outside the workspace: tmp holds the workspace's directories and nothing else.
			for rel := range readTree(t, tmp) {
				if dir := filepath.Dir(filepath.FromSlash(rel)); dir != filepath.Join("a", "b", "ws") && !isUnder(dir, filepath.Join("a", "b", "ws")) {
					t.Errorf("sync wrote %s, outside the workspace", rel)
				}
			}
			for _, l := range readLog(t, logPath) {
				want := noLocalPath
				if l.Argv[len(l.Argv)-1] == "-i" || slices.Contains(l.Argv, "sync") {
					want = ws.Root
				}
				if got := l.Env["P4CLIENTPATH"]; got != want {
					t.Errorf("P4CLIENTPATH=%q for %q, want %q", got, l.Argv, want)
				}
			}
		})
	}
}

// A check (info, login -s, describe...) has no file to write: p4 refuses any the server sends.
func TestChecksWriteNoLocalFile(t *testing.T) {
	ctx := context.Background()
	target := filepath.Join(t.TempDir(), "planted")
	st := defaultState()
	st.WriteOnEveryCall = target
	c, _ := setup(t, st)
	if _, err := c.Trust(ctx); err != nil {
		t.Fatal(err)
	}
	checks := map[string]func() error{
		"info":   func() error { _, err := c.Info(ctx); return err },
		"login":  func() error { return c.LoginStatus(ctx) },
		"stream": func() error { _, err := c.StreamExists(ctx, "//game/main"); return err },
		"files":  func() error { _, err := c.Files(ctx, "//game/main/..."); return err },
		"print":  func() error { _, err := c.Print(ctx, "//game/main/Root.uproject"); return err },
		"describe": func() error {
			_, err := c.Describe(ctx, "42")
			return err
		},
	}
	for name, check := range checks {
		if err := check(); !errors.Is(err, ErrOutsideWorkspace) {
			t.Errorf("%s: %v, want ErrOutsideWorkspace", name, err)
		}
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the server's file was written: %v", err)
	}
}

func isUnder(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != ".."+string(filepath.Separator))
}
