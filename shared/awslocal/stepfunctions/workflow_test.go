package stepfunctions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awscodebuild "github.com/aws/aws-sdk-go-v2/service/codebuild"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	awsssm "github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/awslocal/codebuild"
	"github.com/kilnbuild/kiln/shared/awslocal/lambdas"
	"github.com/kilnbuild/kiln/shared/awslocal/ssm"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/compose/awsapp"
	"github.com/kilnbuild/kiln/shared/hostcred/ssmparam"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

func TestMain(m *testing.M) {
	if os.Getenv("KILN_TEST_HOST") != "" {
		os.Exit(runHost())
	}
	os.Exit(m.Run())
}

const (
	stateMachineARN = "arn:aws:states:local:000000000000:stateMachine:kiln-builds"
	hostProject     = "kiln-hosts"
)

// world is the AWS deployment's workflow on this machine: a store, the task and ended functions
// behind the Lambda stand-in, the CodeBuild stand-in running the test host, the Step Functions
// stand-in running the real definition, and the workflow talking to it through the AWS SDK.
type world struct {
	st         *sqlitestore.Store
	service    *builds.Service
	lifecycle  *builds.Lifecycle
	hostAPI    string // the host API's base URL
	workflow   *sfn.Workflow
	sfn        *awssfn.Client
	hosts      *codebuild.Server
	builds     *awscodebuild.Client // the CodeBuild stand-in's API
	params     *awsssm.Client       // the Parameter Store stand-in holding the hosts' credentials
	paramStore *ssm.Server
	modes      string
	hostDir    string
	org        string
	project    *kiln.Project
}

type worldOptions struct {
	minute    time.Duration // a CodeBuild minute
	failClaim bool          // the claim task fails every time
	heartbeat time.Duration // replaces the host task's HeartbeatSeconds (0: the definition's)
	slots     sfn.Slots     // the claim's concurrency check (nil: none)
	hosted    bool          // the deployment runs kiln's hosted Windows hosts
	linux     []string      // the engine versions kiln's hosted Linux hosts provide
	// throttledPuts: the first this many PutParameter calls of the claim are throttled, as
	// Parameter Store answers past the account's rate (after the SDK's own retries).
	throttledPuts int
	maxHistory    int // the history quota of an execution (0: Step Functions' 25,000)
	quota         int // the CodeBuild stand-in's concurrent-builds quota (0: none)
}

func newWorld(t *testing.T, o worldOptions) *world {
	t.Helper()
	prefix := prefixForTests(t)
	ctx := context.Background()
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	dbPath := filepath.Join(dir, "kiln.db")
	st, err := sqlitestore.Open(ctx, dbPath) // the hosts of the test open it too
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := &world{st: st, modes: filepath.Join(dir, "modes"), hostDir: filepath.Join(dir, "codebuild")}
	if err := os.Mkdir(w.modes, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	org, _ := storefixture.Org(t, st, "", now)
	w.org = org.ID
	w.project = &kiln.Project{ID: kiln.NewID(), OrganizationID: w.org, Name: "P", SourceControl: kiln.SourceGitHub, RepoLink: "a/b",
		InstallationID: "1", CreatedAt: now, UpdatedAt: now}
	if err := st.CreateProject(ctx, w.project, 0); err != nil {
		t.Fatal(err)
	}
	// The host API, passing the hosts' heartbeats on to the Step Functions stand-in (started
	// below); a build that ends answers its task token (an agent's build), as in the API.
	creds := credentials.NewStaticCredentialsProvider("local", "local", "")
	beats := &awsapp.SFNHeartbeats{Logger: logger}
	lifecycle := &builds.Lifecycle{Builds: st, Projects: st, Artifacts: st, Logger: logger,
		Events: &builds.Fanout{Workflow: beats, Logger: logger}}
	w.lifecycle = lifecycle
	api := httptest.NewServer((&agentapi.Server{Store: st, Lifecycle: lifecycle, TaskHeartbeats: beats, Logger: logger}).Handler())
	t.Cleanup(api.Close)
	w.hostAPI = api.URL
	// The hosts' credentials, in the Parameter Store stand-in (no IAM check here: kiln
	// aws-local's tests check the roles).
	w.paramStore = &ssm.Server{Region: "us-east-1", Account: "000000000000"}
	params := httptest.NewServer(w.paramStore)
	t.Cleanup(params.Close)
	paramsClient := awsssm.New(awsssm.Options{BaseEndpoint: aws.String(params.URL), Region: "us-east-1", Credentials: creds})
	w.params = paramsClient
	var credParams sfn.HostCredentials = ssmparam.Store{Client: paramsClient}
	if o.throttledPuts > 0 {
		credParams = &throttledParams{HostCredentials: credParams, left: o.throttledPuts}
	}
	hostCreds := sfn.HostCredentialStore{Params: credParams, Path: "/kiln/hosts"}
	tasks := &sfn.Tasks{Store: st, Lifecycle: lifecycle, Images: map[string]string{"5.3": "kiln-engine:5.3"},
		HostURL: api.URL, TimeLimit: 4 * time.Hour, HostedWindows: o.hosted, HostedLinuxVersions: o.linux, Logger: logger, Slots: o.slots, Credentials: hostCreds,
		SlotWait: func(time.Duration) time.Duration { return time.Second }}
	task := tasks.Handle
	if o.failClaim {
		task = func(ctx context.Context, in sfn.TaskInput) (*sfn.ClaimOutput, error) {
			if in.Task == sfn.TaskClaim {
				return nil, errors.New("the store is unreachable")
			}
			return tasks.Handle(ctx, in)
		}
	}
	fns := httptest.NewServer(lambdas.New(map[string]any{"task": task, "ended": (&sfn.Ended{Lifecycle: lifecycle, Logger: logger, Credentials: hostCreds}).Handle}, logger))
	t.Cleanup(fns.Close)
	w.hosts, err = codebuild.New(codebuild.Config{Project: hostProject, Command: []string{os.Args[0]}, Dir: w.hostDir, Minute: o.minute, Quota: o.quota,
		Env: []string{"PATH=" + os.Getenv("PATH"), "KILN_TEST_HOST=1", "KILN_TEST_DB=" + dbPath, "KILN_TEST_MODES=" + w.modes,
			"KILN_TEST_BEAT_EVERY=" + (o.heartbeat / 10).String(), "KILN_TEST_BEAT_FOR=" + (3 * o.heartbeat).String()}, Logger: logger,
		Parameters: func(ctx context.Context, names []string) (map[string]string, error) {
			out, err := paramsClient.GetParameters(ctx, &awsssm.GetParametersInput{Names: names, WithDecryption: aws.Bool(true)})
			if err != nil {
				return nil, err
			}
			values := map[string]string{}
			for _, p := range out.Parameters {
				values[aws.ToString(p.Name)] = aws.ToString(p.Value)
			}
			return values, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	hostAPI := httptest.NewServer(w.hosts)
	t.Cleanup(hostAPI.Close)
	t.Cleanup(func() { w.hosts.Close() })
	sm, err := Start(ctx, Options{Prefix: prefix, StateMachineARN: stateMachineARN, Dir: filepath.Join(dir, "sfn"),
		Definition: Fill(sfn.Definition(), map[string]string{
			sfn.PlaceholderTaskFunction: "arn:aws:lambda:local:000000000000:function:task", sfn.PlaceholderHostProject: hostProject}),
		LambdaEndpoint: fns.URL, CodeBuildEndpoint: hostAPI.URL, EndedFunction: "ended", PollInterval: 20 * time.Millisecond,
		HeartbeatTimeout: o.heartbeat, MaxHistoryEvents: o.maxHistory, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sm.Close() })
	w.sfn = awssfn.New(awssfn.Options{BaseEndpoint: aws.String(sm.Endpoint()), Region: "local", Credentials: creds})
	beats.Client = w.sfn
	w.builds = awscodebuild.New(awscodebuild.Options{BaseEndpoint: aws.String(hostAPI.URL), Region: "local", Credentials: creds})
	w.workflow = &sfn.Workflow{Executions: w.sfn, StateMachineARN: stateMachineARN, Logger: logger, Hosts: w.builds}
	w.service = &builds.Service{Store: st, Lifecycle: lifecycle, Workflow: w.workflow, Logger: logger}
	return w
}

// prefixForTests is the tests' aws-local-stepfunctions (make deps installs it).
func prefixForTests(t *testing.T) string {
	t.Helper()
	out, err := filepath.Abs(filepath.Join("..", "..", "..", ".cache", "stepfunctions-local"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "node_modules", "aws-local-stepfunctions")); err != nil {
		t.Fatal("FAIL: aws-local-stepfunctions is not installed: run scripts/install-stepfunctions-local.sh (make deps installs it)")
	}
	return out
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Logf("stepfunctions: %s", strings.TrimSpace(string(p)))
	return len(p), nil
}

// setting stores a build setting of the project.
func (w *world) setting(t *testing.T, platform kiln.Platform, version string, timeoutMinutes int) *kiln.BuildSetting {
	t.Helper()
	return w.poolSetting(t, platform, version, timeoutMinutes, "")
}

// poolSetting stores a build setting of the project whose builds run on the agents of pool.
func (w *world) poolSetting(t *testing.T, platform kiln.Platform, version string, timeoutMinutes int, pool string) *kiln.BuildSetting {
	t.Helper()
	now := time.Now().UTC()
	s := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: w.org, ProjectID: w.project.ID, Platform: platform, BuildType: kiln.BuildTypeShipping,
		Branch: "main", UEVersion: version, UprojectPath: "Game.uproject", Trigger: kiln.TriggerManual, TimeoutMinutes: timeoutMinutes,
		AgentPool: pool, CreatedAt: now, UpdatedAt: now}
	if err := w.st.CreateBuildSetting(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// trigger triggers a build of the setting whose host behaves as mode.
func (w *world) trigger(t *testing.T, s *kiln.BuildSetting, mode string) *kiln.Build {
	t.Helper()
	ctx := context.Background()
	b, _, err := w.service.Trigger(ctx, builds.TriggerRequest{Project: w.project, Setting: s, TriggeredBy: "test", Commit: "abc",
		IdempotencyKey: kiln.NewID(), Fingerprint: mode})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.modes, b.ID), []byte(mode), 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// waitFor polls the build until ok says so (or fails the test after a generous deadline).
func (w *world) waitFor(t *testing.T, id string, what string, ok func(b *kiln.Build) bool) *kiln.Build {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := w.st.GetBuild(context.Background(), w.org, id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(b) {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s: still %s (host %q), waiting for %s", id, b.Status, b.Host, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// execution waits for the build's execution to end and answers its status.
func (w *world) execution(t *testing.T, id string) string {
	t.Helper()
	arn, err := sfn.ExecutionARN(stateMachineARN, id)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := w.sfn.DescribeExecution(context.Background(), &awssfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != "RUNNING" {
			if out.Error != nil {
				t.Logf("execution %s: %s: %s", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
			}
			return string(out.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s still running", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hostBuild answers the status of the build's CodeBuild build (the host reported it).
func (w *world) hostBuild(t *testing.T, b *kiln.Build) string {
	t.Helper()
	id, ok := strings.CutPrefix(b.Host, sfn.HostPrefix)
	if !ok {
		t.Fatalf("build %s: its host %q reported no CodeBuild build", b.ID, b.Host)
	}
	out, err := w.builds.BatchGetBuilds(context.Background(), &awscodebuild.BatchGetBuildsInput{Ids: []string{id}})
	if err != nil || len(out.Builds) != 1 {
		t.Fatalf("CodeBuild build %s: %v", id, err)
	}
	return string(out.Builds[0].BuildStatus)
}

// noProcessLeft checks that every process a host started is gone.
func (w *world) noProcessLeft(t *testing.T) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(w.hostDir, "*", "*.pid"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(string(raw))
		deadline := time.Now().Add(10 * time.Second)
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d (%s) is still running", pid, f)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// alive reports whether pid runs (a zombie waiting for its reaper does not).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// noCredentialLeft: once the build's execution ended, its host's credential parameter is gone
// (the claim's answer named it; Finish, HostEnded or the ended function deleted it).
func (w *world) noCredentialLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(w.paramStore.Names()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the execution ended the parameter store holds %v", w.paramStore.Names())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// described is an ended execution's error and cause.
type described struct{ error, cause string }

// describe answers the build's execution's error and cause.
func (w *world) describe(t *testing.T, id string) described {
	t.Helper()
	arn, err := sfn.ExecutionARN(stateMachineARN, id)
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.sfn.DescribeExecution(context.Background(), &awssfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	return described{aws.ToString(out.Error), aws.ToString(out.Cause)}
}
