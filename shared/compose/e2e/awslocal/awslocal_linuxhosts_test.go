package awslocal

import (
	"os"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestHostedLinuxBuildOnAnEC2Host: the stack's template has Linux hosts whose AMI
// holds testLinuxEngine. A Linux build of that engine without an agent pool waits in kiln's
// hosted Linux pool (not on the CodeBuild stand-in); the schedule's kiln/WaitingLinuxBuilds
// makes the Linux scaling stand-in launch an "instance" (`kiln agent --ec2-host` for Linux, as
// a uid of KILN_BUILD_UIDS when aws-local runs as root, with its own metadata service), whose
// agent claims the build with its signed identity document, runs it through the host API to a
// downloadable artifact, and is terminated by the schedule once the build ended. No Windows
// host is launched for it, and the instance's one claim is recorded.
func TestHostedLinuxBuildOnAnEC2Host(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.AWSLocal)
	id, instance := w.HostedBuild(t, map[string]any{"platform": "Linux", "ueVersion": e2e.LinuxEngine}, "Linux", kiln.HostedPoolLinux)
	// Never root: Unreal refuses to run as root, and the AMI's unit runs the agent as its user.
	if uid, ok := w.AWS.EC2HostUID(instance); !ok || uid == 0 {
		t.Errorf("the instance's agent ran as uid %d (known %v), want a user that is not root (aws-local's euid %d)", uid, ok, os.Geteuid())
	}
	for deadline := time.Now().Add(60 * time.Second); w.AWS.LinuxHostInstances() > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the instance was not terminated after its build: %d alive", w.AWS.LinuxHostInstances())
		}
	}
	if n := w.AWS.WindowsHostInstances(); n != 0 {
		t.Errorf("%d Windows hosts run for a Linux build", n)
	}
	if got := w.Execution(t, id, true); got != "SUCCEEDED" {
		t.Errorf("the execution of the hosted build ended %s, want SUCCEEDED", got)
	}
}
