// Package deptest checks, in tests, which packages a package links (go list -deps): how the
// compositions and the Lambdas keep each deployment's parts apart.
package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

// OneMachineParts are SQLite and the build host's parts (build steps, packaging, sandbox, runner,
// the one-machine workflow), which no Lambda links.
var OneMachineParts = []string{
	"modernc.org/sqlite",
	"github.com/kilnbuild/kiln/shared/store/sqlitestore",
	"github.com/kilnbuild/kiln/shared/buildsteps",
	"github.com/kilnbuild/kiln/shared/packaging",
	"github.com/kilnbuild/kiln/shared/sandbox",
	"github.com/kilnbuild/kiln/shared/runner",
	"github.com/kilnbuild/kiln/shared/workflow/local",
}

// Linked returns the packages pkg (as the go command names it, from the test's directory) links
// that are one of forbidden or below one. It fails the test when go list cannot tell.
func Linked(t testing.TB, pkg string, forbidden ...string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %s gave too little to judge: %q", pkg, out)
	}
	var linked []string
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				linked = append(linked, d)
			}
		}
	}
	return linked
}
