package main

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/deptest"
)

// TestTheLambdaLinksNoOneMachineParts: the API Lambda's binary carries neither SQLite nor the
// build host's parts (build steps, packaging, sandbox, runner, the one-machine workflow).
func TestTheLambdaLinksNoOneMachineParts(t *testing.T) {
	for _, d := range deptest.Linked(t, ".", deptest.OneMachineParts...) {
		t.Errorf("the Lambda links %s", d)
	}
}
