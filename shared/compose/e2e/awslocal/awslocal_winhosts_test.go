package awslocal

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestHostedWin64BuildOnAnEC2Host: a Win64 build without an agent pool waits in
// kiln's hosted pool; the schedule's metric makes the scaling stand-in launch an "instance"
// (`kiln agent --ec2-host` with its own metadata service), whose agent claims the build with its
// signed identity document, runs it through the host API to a downloadable artifact, and is
// terminated by the schedule once the build ended. The instance's one claim is recorded.
func TestHostedWin64BuildOnAnEC2Host(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.AWSLocal)
	id, _ := w.HostedBuild(t, map[string]any{"platform": "Win64"}, "Win64", kiln.HostedPoolWin64)
	for deadline := time.Now().Add(60 * time.Second); w.AWS.WindowsHostInstances() > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the instance was not terminated after its build: %d alive", w.AWS.WindowsHostInstances())
		}
	}
	if got := w.Execution(t, id, true); got != "SUCCEEDED" {
		t.Errorf("the execution of the hosted build ended %s, want SUCCEEDED", got)
	}
}
