package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/app/awslocalapp"
	"github.com/kilnbuild/kiln/shared/httpapi/openapi/openapitest"
)

// onAWSLocal reports whether a test runs under TestOnAWSLocal (or a benchmark's "aws-local" part).
func onAWSLocal(t testing.TB) bool {
	return strings.HasPrefix(t.Name(), "TestOnAWSLocal/") || strings.HasPrefix(t.Name(), "TestAWSLocalIAM/") || strings.HasSuffix(t.Name(), "/aws-local")
}

// startAWSLocal starts kiln aws-local on cfg (the same settings kiln serve got), with its hosts
// running the kiln binary built for the tests, enforcing the IAM policies of
// $KILN_AWSLOCAL_TEMPLATE, else of the stack's synthesized template as synthesized
// (stackTemplateFile).
func startAWSLocal(t testing.TB, ts *testService, logger *slog.Logger) *testService {
	t.Helper()
	template := os.Getenv(awslocalapp.TemplateEnv)
	if template == "" {
		template = stackTemplateFile(t)
	}
	l, err := awslocalapp.Start(context.Background(), awsLocalSettings(t, ts.cfg), awslocalapp.Options{HostCommand: []string{kilnBinary(t), "agent", "run"}, EC2HostCommand: []string{kilnBinary(t), "agent", "--ec2-host"},
		TickEvery: time.Second, Template: template}, ts.out, logger)
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

// awsLocalSettings are the settings of kiln serve that kiln aws-local reads, taken from cfg as
// cmd/kiln's awsLocalSettings takes them.
func awsLocalSettings(t testing.TB, cfg Config) awslocalapp.Settings {
	t.Helper()
	gh, err := cfg.GitHubApp()
	if err != nil {
		t.Fatal(err)
	}
	return awslocalapp.Settings{
		Addr: cfg.Addr, Data: cfg.Data, PublicURL: cfg.GivenPublicURL(), Engines: cfg.Engines, Workers: cfg.Workers,
		GitHub: gh, GitHubWebhookSecret: cfg.GitHubWebhookSecret, SignUp: cfg.SignUp, Perforce: cfg.PerforceVerifier(),
		P4: cfg.P4, Sandbox: cfg.Sandbox, Bwrap: cfg.Bwrap, OutboundAllow: cfg.OutboundAllow,
		RateLimit: cfg.RateLimit, SMTPURL: cfg.SMTPURL, SMTPFrom: cfg.SMTPFrom, Plans: cfg.Plans,
		BuildTimeout: cfg.BuildTimeout, BuildUIDs: cfg.BuildUIDs,
		ArtifactMax: cfg.ArtifactMax, ArtifactRetention: cfg.ArtifactRetention, CacheMaxPerOrg: cfg.CacheMaxPerOrg,
		DeliveryAttempts: cfg.DeliveryAttempts, DeliveryBackoff: cfg.DeliveryBackoff,
	}
}

// shareWithHosts lets aws-local's build hosts reach path: running as root, aws-local runs them as
// the buildspec's run-as user (a build uid, neither owner nor group of the test's files). path
// gets mode, and the temporary directories above it o+x.
func shareWithHosts(t testing.TB, path string, mode os.FileMode) {
	t.Helper()
	if !onAWSLocal(t) || os.Geteuid() != 0 {
		return
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	for dir := filepath.Dir(path); strings.HasPrefix(dir, os.TempDir()+string(filepath.Separator)); dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, fi.Mode().Perm()|0o001); err != nil {
			t.Fatal(err)
		}
	}
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
		_ = os.Chmod(dir, 0o755) // aws-local's hosts run it as the buildspec's run-as user
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

// awsLocalDownloadAndRestart: on kiln aws-local, the build's host credential is in no
// execution data and its parameter is gone once it ended (checkCredentialKeptOutOfTheExecution);
// a build's artifact is in MinIO, its signed URL
// answers 302 to a presigned GET of MinIO that yields the artifact with the descriptor's MD5; and
// after a restart on the same KILN_DATA the owner's token, the build and its artifact are all
// still there, and a new build runs.
func awsLocalDownloadAndRestart(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, nil)["id"].(string)
	id := w.trigger(t, pid, sid, "")
	if b := w.waitEnded(t, id); b["status"] != "complete" {
		t.Fatalf("build ended %v: %v\nlog:\n%s", b["status"], b["failureReason"], w.logText(t, id))
	}
	w.checkCredentialKeptOutOfTheExecution(t, id)
	check := func() {
		t.Helper()
		d := w.do(t, "GET", "/builds/"+id+"/download", w.token, nil)
		if d.Status != 200 {
			t.Fatalf("download descriptor: %d %s", d.Status, d.Raw)
		}
		client := openapitest.Client(t)
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := client.Get(field(t, d.Body, "url"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		location := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusFound || !strings.HasPrefix(location, w.aws.S3URL()+"/"+awslocalapp.Bucket+"/artifacts/"+w.orgID+"/"+id+".tar.gz?") {
			t.Fatalf("signed URL: %d, Location %q; want 302 to a presigned GET of MinIO (through aws-local's IAM check)", resp.StatusCode, location)
		}
		resp, err = http.Get(location)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || int64(len(data)) != int64(d.Body["sizeBytes"].(float64)) || md5hex(data) != field(t, d.Body, "checksumMd5") {
			t.Fatalf("presigned GET: %d, %d bytes, md5 %s; descriptor %s", resp.StatusCode, len(data), md5hex(data), d.Raw)
		}
	}
	check()

	if err := w.aws.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	token := w.token
	again := startService(t, w.cfg)
	if strings.Count(again.out.String(), "kiln_") != 0 {
		t.Fatalf("a restart printed a new owner token:\n%s", again.out.String())
	}
	again.token = token
	w.testService = again
	check()
	if b := w.waitEnded(t, w.trigger(t, pid, sid, "")); b["status"] != "complete" {
		t.Fatalf("a build after the restart ended %v: %v", b["status"], b["failureReason"])
	}
}
