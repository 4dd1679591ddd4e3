package e2e

import (
	"path/filepath"
	"sync"

	"github.com/kilnbuild/kiln/shared/awslocal/repodeps"
)

// repoRoot is the repository's top directory: tests of every package find the stand-in engine,
// the fake p4, cmd/kiln and the scripts from it. Tests run inside the repository, so not finding
// it is a broken checkout.
var repoRoot = sync.OnceValue(func() string {
	root, err := repodeps.Root()
	if err != nil {
		panic("e2e: " + err.Error())
	}
	return root
})

// RepoPath is elem joined to the repository's top directory.
func RepoPath(elem ...string) string { return filepath.Join(append([]string{repoRoot()}, elem...)...) }
