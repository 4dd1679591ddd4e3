package stepfunctions

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// Host behaviours of the test build host (this test binary started by the CodeBuild stand-in,
// standing in for `kiln agent run`). The test names one per build in <modes>/<build id>.
const (
	hostComplete = "complete" // reports its CodeBuild build, completes the build, exits 0
	hostFail     = "fail"     // fails the build with a reason, exits 1
	hostDie      = "die"      // kills itself without a word (the host is lost)
	hostSilent   = "silent"   // exits 0 without reporting a result
	hostSleep    = "sleep"    // reports its CodeBuild build, starts a child, and sleeps
	// hostBeatLong heartbeats the host API for KILN_TEST_BEAT_FOR, longer than the heartbeat
	// timeout, then completes the build.
	hostBeatLong = "beat-long"
)

// hostReason is the failure reason hostFail reports.
const hostReason = "RunUAT failed (exit code 6)"

// runHost is the test build host: it checks its credential against the build (as the API's host
// endpoints do), then does what its mode says through the lifecycle on the shared store.
func runHost() int {
	ctx := context.Background()
	if err := writePid(os.Getpid(), "host.pid"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	credential, buildID := os.Getenv(agentapi.EnvHostCredential), os.Getenv(agentapi.EnvBuildID)
	orgID, credBuild, err := hostcred.Parse(credential)
	if err != nil || credBuild != buildID || os.Getenv(agentapi.EnvHostURL) == "" {
		fmt.Fprintln(os.Stderr, "host: bad environment", err)
		return 3
	}
	if os.Getenv(agentapi.EnvTaskToken) != "" {
		fmt.Fprintln(os.Stderr, "host: a CodeBuild host got a task token")
		return 3
	}
	mode, err := os.ReadFile(filepath.Join(os.Getenv("KILN_TEST_MODES"), buildID))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	st, err := sqlitestore.Open(ctx, os.Getenv("KILN_TEST_DB"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer st.Close()
	b, err := st.GetBuild(ctx, orgID, buildID)
	if err != nil || !hostcred.Matches(credential, b.HostCredentialHash) {
		fmt.Fprintln(os.Stderr, "host: the credential is not the build's", err)
		return 3
	}
	lc := &builds.Lifecycle{Builds: st, Projects: st, Artifacts: st}
	report := func() error { // the host starts the build and tells its CodeBuild build, so a stop reaches it (the host API's start)
		_, err := lc.StartOnHost(ctx, orgID, buildID, sfn.HostCodeBuild, sfn.HostPrefix+os.Getenv("CODEBUILD_BUILD_ID"))
		return err
	}
	client := &hostclient.Client{BaseURL: os.Getenv(agentapi.EnvHostURL), Credential: credential}
	every, _ := time.ParseDuration(os.Getenv("KILN_TEST_BEAT_EVERY"))
	beats := func(n int) error { // heartbeats through the host API, as kiln agent run sends them
		for range n {
			if err := client.Heartbeat(ctx); err != nil {
				return err
			}
			time.Sleep(every)
		}
		return nil
	}
	switch string(mode) {
	case hostBeatLong:
		if err := report(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		beatFor, _ := time.ParseDuration(os.Getenv("KILN_TEST_BEAT_FOR"))
		if every <= 0 {
			fmt.Fprintln(os.Stderr, "host: KILN_TEST_BEAT_EVERY is not set")
			return 3
		}
		if err := beats(int(beatFor / every)); err != nil {
			fmt.Fprintln(os.Stderr, "host: heartbeat:", err)
			return 3
		}
		fallthrough
	case hostComplete:
		if string(mode) == hostComplete {
			if err := report(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
		}
		_, err := lc.Complete(ctx, &kiln.Artifact{BuildID: b.ID, OrganizationID: b.OrganizationID, ProjectID: b.ProjectID,
			BuildSettingID: b.BuildSettingID, Platform: b.Platform, BuildType: b.BuildType, UEVersion: b.UEVersion, Branch: b.Branch,
			Key: b.OrganizationID + "/" + b.ID + ".tar.gz", SizeBytes: 1, ChecksumMD5: "d41d8cd98f00b204e9800998ecf8427e", CreatedAt: time.Now()})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		return 0
	case hostFail:
		if err := report(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		if _, err := lc.Fail(ctx, orgID, buildID, hostReason); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		return 1
	case hostDie:
		if self, err := os.FindProcess(os.Getpid()); err == nil {
			_ = self.Kill() // SIGKILL on Unix
		}
		select {}
	case hostSilent:
		return 0
	case hostSleep:
		if err := report(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		return sleepWithChild()
	}
	fmt.Fprintf(os.Stderr, "host: unknown mode %q\n", mode)
	return 3
}

// sleepWithChild starts a process of the host's own (a stop must end it too) and sleeps.
func sleepWithChild() int {
	child := exec.Command("sleep", "3600")
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if err := writePid(child.Process.Pid, "child.pid"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	select {}
}

// writePid notes a process of the host in its build's directory, for the test to check it is gone.
func writePid(pid int, name string) error {
	return os.WriteFile(filepath.Join(os.Getenv("CODEBUILD_SRC_DIR"), name), []byte(strconv.Itoa(pid)), 0o600)
}
