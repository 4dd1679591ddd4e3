package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheLambdaLinksNoOneMachineParts: the API Lambda's binary carries neither SQLite nor the
// build host's parts (build steps, packaging, sandbox, runner, the one-machine workflow).
func TestTheLambdaLinksNoOneMachineParts(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave too little to judge: %q", out)
	}
	forbidden := []string{
		"modernc.org/sqlite",
		"github.com/kilnbuild/kiln/shared/store/sqlitestore",
		"github.com/kilnbuild/kiln/shared/buildsteps",
		"github.com/kilnbuild/kiln/shared/packaging",
		"github.com/kilnbuild/kiln/shared/sandbox",
		"github.com/kilnbuild/kiln/shared/runner",
		"github.com/kilnbuild/kiln/shared/workflow/local",
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("the Lambda links %s", d)
			}
		}
	}
}
