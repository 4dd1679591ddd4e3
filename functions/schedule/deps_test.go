package main

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/deptest"
)

// TestTheBackgroundLambdasLinkNoOneMachineParts: the schedule, deliver and admin Lambdas carry
// neither SQLite nor the build host's parts.
func TestTheBackgroundLambdasLinkNoOneMachineParts(t *testing.T) {
	for _, fn := range []string{"../schedule", "../deliver", "../admin"} {
		for _, d := range deptest.Linked(t, fn, deptest.OneMachineParts...) {
			t.Errorf("%s links %s", fn, d)
		}
	}
}
