package app

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestOnAWSLocal runs end-to-end tests of kiln serve a second time against kiln aws-local: the
// API Lambda's handler behind the API Gateway stand-in, DynamoDB Local, MinIO, the state machine
// on aws-local-stepfunctions with the task Lambda's handler, and `kiln agent run` hosts started
// by the CodeBuild stand-in with their per-build credentials. The tests are unchanged: only
// startService differs (onAWSLocal).
func TestOnAWSLocal(t *testing.T) {
	for _, tt := range []struct {
		name string
		test func(*testing.T)
	}{
		{"GitHubBuildToADownloadableArtifact", TestBuildRunsToADownloadableArtifact},
		{"CommitOverrideAndFailures", TestCommitOverrideAndFailures},
		{"SupersedeCancelAndIdempotency", TestSupersedeCancelAndIdempotency},
		{"AutoDeployDeliversTheArtifact", TestAutoDeployDeliversTheArtifact},
	} {
		t.Run(tt.name, tt.test)
	}
}

// onAWSLocal reports whether a test runs under TestOnAWSLocal.
func onAWSLocal(t testing.TB) bool { return strings.HasPrefix(t.Name(), "TestOnAWSLocal/") }

// startAWSLocal starts kiln aws-local on cfg (the same settings kiln serve got), with its hosts
// running the kiln binary built for the tests.
func startAWSLocal(t testing.TB, ts *testService, logger *slog.Logger) *testService {
	t.Helper()
	l, err := StartAWSLocal(context.Background(), ts.cfg, AWSLocalOptions{HostCommand: []string{kilnBinary(t), "agent", "run"},
		TickEvery: time.Second}, ts.out, logger)
	if err != nil {
		t.Fatalf("start kiln aws-local: %v\nlog:\n%s", err, ts.logs.String())
	}
	ts.aws = l
	ts.token = tokenRe.FindString(ts.out.String())
	t.Cleanup(func() {
		_ = l.Shutdown(context.Background())
		if t.Failed() {
			t.Logf("kiln aws-local's log:\n%s", ts.logs.String())
		}
	})
	return ts
}

// URL is the base URL of the service under test.
func (ts *testService) URL() string {
	if ts.aws != nil {
		return ts.aws.URL()
	}
	return ts.Service.URL()
}

var (
	kilnBinaryOnce sync.Once
	kilnBinaryPath string
	kilnBinaryErr  error
)

// kilnBinary builds cmd/kiln once for the package's tests (the build hosts run it).
func kilnBinary(t testing.TB) string {
	kilnBinaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kiln-bin-")
		if err != nil {
			kilnBinaryErr = err
			return
		}
		kilnBinaryPath = filepath.Join(dir, "kiln")
		out, err := exec.Command("go", "build", "-o", kilnBinaryPath, "../../cmd/kiln").CombinedOutput()
		if err != nil {
			kilnBinaryErr = err
			kilnBinaryPath = string(out)
		}
	})
	if kilnBinaryErr != nil {
		t.Fatalf("build cmd/kiln: %v\n%s", kilnBinaryErr, kilnBinaryPath)
	}
	return kilnBinaryPath
}
