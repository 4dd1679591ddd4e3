package e2e

import (
	"path/filepath"
	"runtime"
)

// repoRoot is the repository's top directory: tests of every package find the stand-in engine,
// the fake p4, cmd/kiln and the scripts from it, wherever they run.
var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}()

// RepoPath is elem joined to the repository's top directory.
func RepoPath(elem ...string) string { return filepath.Join(append([]string{repoRoot}, elem...)...) }
