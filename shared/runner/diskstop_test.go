package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDropWorkspaceRemovesWhatABuildStoppedForDiskWrote(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cause    error
		wantGone bool
	}{
		{"stopped for disk space", diskLow{reason: "disk space: ..."}, true},
		{"cancelled", context.Canceled, false},
		{"time limit", errTimeLimit, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			outside := filepath.Join(dir, "outside")
			workspace := filepath.Join(dir, "workspaces", "org", "project", WorkspaceKey("main"))
			for _, d := range []string{outside, filepath.Join(workspace, "Saved")} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{filepath.Join(workspace, "Saved", "hog"), workspace + ".cache", filepath.Join(outside, "keep")} {
				if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// A link the build left to something outside its workspace: only the link goes.
			if err := os.Symlink(outside, filepath.Join(workspace, "link")); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(tc.cause)
			(&Runner{WorkDir: dir}).dropWorkspace(ctx, workspace)
			for _, p := range []string{workspace, workspace + ".cache"} {
				if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) != tc.wantGone {
					t.Errorf("%s: %v, want gone %v", p, err, tc.wantGone)
				}
			}
			if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
				t.Errorf("the link's target went too: %v", err)
			}
		})
	}
}
