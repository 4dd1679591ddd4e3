package buildcache

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/nofollow"
)

// opened opens the project directory p as the cache functions take it, closed at the test's end.
func opened(tb testing.TB, p string) *nofollow.Dir {
	tb.Helper()
	d, err := nofollow.Open(p)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}
