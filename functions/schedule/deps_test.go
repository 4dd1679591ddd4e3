package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheBackgroundLambdasLinkNoOneMachineParts: the schedule, deliver and admin Lambdas carry
// neither SQLite nor the build host's parts.
func TestTheBackgroundLambdasLinkNoOneMachineParts(t *testing.T) {
	for _, fn := range []string{"../schedule", "../deliver", "../admin"} {
		out, err := exec.Command("go", "list", "-deps", fn).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", fn, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s gave too little to judge: %q", fn, out)
		}
		for _, d := range deps {
			for _, f := range []string{"modernc.org/sqlite", "github.com/kilnbuild/kiln/shared/store/sqlitestore",
				"github.com/kilnbuild/kiln/shared/buildsteps", "github.com/kilnbuild/kiln/shared/packaging",
				"github.com/kilnbuild/kiln/shared/sandbox", "github.com/kilnbuild/kiln/shared/runner",
				"github.com/kilnbuild/kiln/shared/workflow/local"} {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s links %s", fn, d)
				}
			}
		}
	}
}
