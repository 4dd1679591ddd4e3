package e2e

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/settings"
)

// templates are the stack templates tests gave their aws-local (WithTemplate), by data directory.
var templates sync.Map

// WithTemplate makes the world's aws-local enforce the IAM policies of the template at path
// (WriteTemplate) instead of the stack's.
func WithTemplate(path string) func(*serve.Config) {
	return func(c *serve.Config) { templates.Store(c.Data, path) }
}

// codeBuildQuotas are the CodeBuild quotas tests gave their aws-local (WithCodeBuildQuota), by
// data directory.
var codeBuildQuotas sync.Map

// WithCodeBuildQuota sets the world's aws-local CodeBuild quota (KILN_CODEBUILD_QUOTA): the
// stand-in's concurrent builds, and what the task function shares between organizations.
func WithCodeBuildQuota(n int) func(*serve.Config) {
	return func(c *serve.Config) { codeBuildQuotas.Store(c.Data, n) }
}

// startAWSLocal starts kiln aws-local on cfg (the same settings kiln serve got), with its hosts
// running the kiln binary built for the tests, enforcing the IAM policies of
// $KILN_AWSLOCAL_TEMPLATE, else of the stack's synthesized template as synthesized
// (stackTemplateFile). Once it stopped, at the test's end, every IAM refusal it logged that the
// test did not expect (ExpectRefusals) fails the test.
func startAWSLocal(t testing.TB, ts *Server, logger *slog.Logger) *Server {
	t.Helper()
	template := settings.AWSLocalTemplate.Get(os.Getenv)
	if p, ok := templates.Load(ts.Config.Data); ok {
		template = p.(string)
	}
	if template == "" {
		template = StackTemplateFile(t)
	}
	s := awsLocalSettings(t, ts.Config)
	if n, ok := codeBuildQuotas.Load(ts.Config.Data); ok {
		s.CodeBuildQuota = n.(int)
	}
	l, err := awslocalapp.Start(context.Background(), s, awslocalapp.Options{HostCommand: []string{KilnBinary(t), "agent", "run"}, EC2HostCommand: []string{KilnBinary(t), "agent", "--ec2-host"},
		TickEvery: tickOf(ts.Config.Data), Template: template, Backends: backendsFor(t, ts.Config.Data), Clock: ts.Config.SchedulerClock}, ts.Out, logger)
	if err != nil {
		t.Fatalf("start kiln aws-local: %v\nlog:\n%s", err, ts.Logs.String())
	}
	ts.AWS = l
	ts.Token = TokenRe.FindString(ts.Out.String())
	t.Cleanup(func() {
		_ = l.Shutdown(context.Background())
		checkRefusals(t, ts)
		if t.Failed() {
			t.Logf("kiln aws-local's log:\n%s", ts.Logs.String())
		}
	})
	return ts
}

// awsLocalSettings are the settings of kiln serve that kiln aws-local reads, taken from cfg as
// cmd/kiln's awsLocalSettings takes them.
func awsLocalSettings(t testing.TB, cfg serve.Config) awslocalapp.Settings {
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
func shareWithHosts(t testing.TB, d Deployment, path string, mode os.FileMode) {
	t.Helper()
	if d != AWSLocal || os.Geteuid() != 0 {
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
func (ts *Server) URL() string {
	if ts.Elsewhere != "" {
		return ts.Elsewhere
	}
	if ts.AWS != nil {
		return ts.AWS.URL()
	}
	return ts.Service.URL()
}

var (
	kilnBinaryOnce sync.Once
	KilnBinaryPath string
	KilnBinaryErr  error
)

// kilnBinary builds cmd/kiln once for the package's tests (the build hosts run it).
func KilnBinary(t testing.TB) string {
	kilnBinaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kiln-bin-")
		if err != nil {
			KilnBinaryErr = err
			return
		}
		_ = os.Chmod(dir, 0o755) // aws-local's hosts run it as the buildspec's run-as user
		KilnBinaryPath = filepath.Join(dir, "kiln")
		out, err := exec.Command("go", "build", "-o", KilnBinaryPath, RepoPath("cmd", "kiln")).CombinedOutput()
		if err != nil {
			KilnBinaryErr = err
			KilnBinaryPath = string(out)
		}
	})
	if KilnBinaryErr != nil {
		t.Fatalf("build cmd/kiln: %v\n%s", KilnBinaryErr, KilnBinaryPath)
	}
	return KilnBinaryPath
}
