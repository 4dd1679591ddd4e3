package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/manifest"
	"github.com/kilnbuild/kiln/shared/syncbuf"
)

// runAsKiln, set to 1 in its environment, makes this test binary run as kiln (TestMain).
const runAsKiln = "KILNTEST_RUN_AS_KILN"

// testAgentToken is the agent token of these tests; the probe looks for its prefix.
const testAgentToken = "kagent_0123456789abcdefghijABCDEFGHIJ0123456789"

// environProbe is the project's FakeUAT.env, which the stand-in engine sources: the build, run
// as the customer's code would, reads every process's environment it can (the agent's, its
// parent's, included) and says how many it could read and in how many it found the agent's
// token.
const environProbe = `probe_readable=0 probe_found=0
for f in /proc/[0-9]*/environ /proc/$PPID/environ; do
	if cat "$f" >/dev/null 2>&1; then
		probe_readable=$((probe_readable + 1))
		if grep -qa -e 'KILN_AGENT_TOKEN=' -e 'kagent_' "$f" 2>/dev/null; then
			probe_found=$((probe_found + 1))
		fi
	fi
done
echo "LogInit: Display: environ probe: readable=$probe_readable found=$probe_found"
`

// TestAgentBuildsCannotReadTheAgentToken: `kiln agent` on Linux runs its builds in the bubblewrap
// sandbox by default, where the build's own /proc shows none of the agent's processes: a build
// that reads every /proc/*/environ finds no agent token. With the sandbox off and the token in
// the agent's environment, the same build finds it (the probe works). Given in a file, the token
// is in no process's environment, the agent's included, and the agent claims with it.
func TestAgentBuildsCannotReadTheAgentToken(t *testing.T) {
	linuxOnly(t)
	gh := githubtest.New(t)
	gh.AddInstallation(1, "studio")
	gh.AddRepo(1, "studio/shooter", true, "main").Commit("main", "Probe", "Ada Lovelace", map[string]string{
		"Shooter/Shooter.uproject": `{"EngineAssociation": "5.4"}`,
		"Shooter/FakeUAT.env":      environProbe,
	})
	enginesDir := standInEngines(t, "5.4")
	tokenFile := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(tokenFile, []byte(testAgentToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		env       []string
		wantFound bool
	}{
		{name: "sandboxed by default", env: []string{"KILN_AGENT_TOKEN=" + testAgentToken}},
		// The control: unconfined, a build runs as the agent's user and reads its environment;
		// an agent run as root runs it as a build uid of its own, which cannot.
		{name: "control: unconfined with the token in the environment", env: []string{"KILN_AGENT_TOKEN=" + testAgentToken, "KILN_SANDBOX=off"}, wantFound: os.Geteuid() != 0},
		{name: "unconfined with the token in a file", env: []string{"KILN_AGENT_TOKEN_FILE=" + tokenFile, "KILN_SANDBOX=off"}},
		{name: "sandboxed with the token in a file", env: []string{"KILN_AGENT_TOKEN_FILE=" + tokenFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := newFakeHostService(t, gh.WebURL()+"studio/shooter.git", gh.IssueToken(1))
			agent := startKilnAgent(t, svc.URL, enginesDir, tc.env)
			status := svc.wait(t)
			environ, err := os.ReadFile("/proc/" + strconv.Itoa(agent.Process.Pid) + "/environ")
			if err != nil {
				t.Fatalf("read the agent's environment: %v", err)
			}
			stopKilnAgent(t, agent)
			if status != "complete" {
				t.Fatalf("the build ended %s; log:\n%s", status, svc.log())
			}
			if auth := svc.claimAuth(); auth != "Bearer "+testAgentToken {
				t.Errorf("the agent claimed with %q", auth)
			}
			m := regexp.MustCompile(`environ probe: readable=(\d+) found=(\d+)`).FindStringSubmatch(svc.log())
			if m == nil {
				t.Fatalf("the build did not run the probe; log:\n%s", svc.log())
			}
			readable, _ := strconv.Atoi(m[1])
			found, _ := strconv.Atoi(m[2])
			t.Logf("the build could read %d environments and found the token in %d", readable, found)
			if readable == 0 {
				t.Errorf("the probe read no environment at all, not even its own: it proves nothing")
			}
			if tc.wantFound != (found > 0) {
				t.Errorf("the build found the agent's token in %d environments; want found: %v", found, tc.wantFound)
			}
			inEnv := bytes.Contains(environ, []byte(testAgentToken))
			if fromFile := strings.Contains(strings.Join(tc.env, " "), "TOKEN_FILE="); fromFile && inEnv {
				t.Errorf("the token given in a file is in /proc/<agent>/environ")
			}
		})
	}
}

// TestAgentWithoutBwrapRefusesToStart: on Linux, where builds are sandboxed by default, an agent
// that cannot run bubblewrap stops at start with the fix rather than run builds unconfined.
func TestAgentWithoutBwrapRefusesToStart(t *testing.T) {
	linuxOnly(t)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer api.Close()
	env := map[string]string{"KILN_AGENT_URL": api.URL, "KILN_AGENT_TOKEN": testAgentToken, "KILN_BWRAP": filepath.Join(t.TempDir(), "no-bwrap")}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := agentCmd(ctx, []string{"--engines", fakeEngines(t, "5.4"), "--workdir", t.TempDir()}, func(k string) string { return env[k] }, &bytes.Buffer{})
	if err == nil {
		t.Fatal("kiln agent ran without its sandbox")
	}
	for _, want := range []string{"bubblewrap", "apt-get install bubblewrap", "KILN_SANDBOX=off"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("start error %q does not say %q", err, want)
		}
	}
}

// linuxOnly skips a test of what only Linux has (bubblewrap, /proc): kiln's tests run on Linux.
func linuxOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("bubblewrap and /proc are Linux's")
	}
}

// standInEngines is an engines directory with the stand-in engine (testdata/fake-engine) as each
// version.
func standInEngines(t *testing.T, versions ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range versions {
		if err := os.CopyFS(filepath.Join(dir, v), os.DirFS("../../testdata/fake-engine")); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, v, engines.RunUATPath), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startKilnAgent runs `kiln agent` (this test binary as kiln) as a process of its own, with env
// and none of the test's own KILN_* variables.
func startKilnAgent(t *testing.T, url, enginesDir string, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "agent", "--engines", enginesDir, "--platforms", "Linux", "--workdir", t.TempDir())
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KILN") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{runAsKiln + "=1", "KILN_AGENT_URL=" + url}, env...)...)
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("kiln agent's output:\n%s", out.String())
		}
	})
	return cmd
}

// stopKilnAgent stops the agent as its service manager would and waits for it.
func stopKilnAgent(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Error("kiln agent did not stop on SIGTERM")
	}
}

// fakeHostService is the service as one agent sees it: it hands out one build of a GitHub
// project on the first claim, then none, and takes the build's host API calls, its log and
// its streamed artifact.
type fakeHostService struct {
	URL   string
	mu    sync.Mutex
	auth  string
	lines []string
	ended chan string
}

const (
	fakeOrg   = "k1"
	fakeBuild = "b1"
)

func newFakeHostService(t *testing.T, cloneURL, gitToken string) *fakeHostService {
	t.Helper()
	s := &fakeHostService{ended: make(chan string, 1)}
	claimed := false
	artifactKey := fakeOrg + "/" + fakeBuild + ".tar.gz"
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		reply := func(v any) { _ = json.NewEncoder(w).Encode(v) }
		switch p := strings.TrimPrefix(r.URL.Path, agentapi.PathPrefix); {
		case r.URL.Path == agentapi.ClaimPath:
			if claimed {
				s.mu.Unlock()
				time.Sleep(200 * time.Millisecond)
				s.mu.Lock()
				w.WriteHeader(http.StatusNoContent)
				return
			}
			claimed, s.auth = true, r.Header.Get("Authorization")
			reply(agentapi.ClaimAnswer{BuildID: fakeBuild, HostCredential: "kbh." + fakeOrg + "." + fakeBuild + ".secret"})
		case p == "start":
			reply(agentapi.Job{
				Build: agentapi.JobBuild{ID: fakeBuild, OrganizationID: fakeOrg, ProjectID: "p1", BuildSettingID: "s1",
					Platform: "Linux", BuildType: "Shipping", Branch: "main", UEVersion: "5.4"},
				Project:      agentapi.JobProject{ID: "p1", Name: "studio/shooter", SourceControl: "github", RepoLink: "studio/shooter"},
				UprojectPath: "Shooter/Shooter.uproject",
				Git:          &agentapi.GitJob{CloneURL: cloneURL, Token: gitToken, ExpiresAt: time.Now().Add(time.Hour)},
			})
		case p == "heartbeat" || p == "progress":
			reply(struct{}{})
		case p == "logs/last":
			reply(agentapi.LastLogLine{Last: int64(len(s.lines))})
		case p == "logs":
			var in agentapi.LogsRequest
			_ = json.NewDecoder(r.Body).Decode(&in)
			for i, l := range in.Lines {
				if n := int(in.First) + i; n == len(s.lines)+1 {
					s.lines = append(s.lines, l.Message)
				}
			}
			reply(struct{}{})
		case p == "artifact/uploads":
			var in agentapi.CreateUploadRequest
			_ = json.NewDecoder(r.Body).Decode(&in)
			key := artifactKey
			if in.Object == agentapi.UploadManifest {
				key = manifest.Key(artifactKey)
			}
			reply(agentapi.Upload{Key: key, Stream: true})
		case p == "artifact" && r.Method == http.MethodPut:
			sum := md5.New()
			n, _ := io.Copy(sum, r.Body)
			reply(agentapi.StreamedArtifact{Size: n, MD5: hex.EncodeToString(sum.Sum(nil))})
		case p == "complete" || p == "fail":
			var in agentapi.FailRequest
			_ = json.NewDecoder(r.Body).Decode(&in)
			status := map[string]string{"complete": "complete", "fail": "failed"}[p]
			if in.Reason != "" {
				s.lines = append(s.lines, "kiln: build failed: "+in.Reason)
			}
			select {
			case s.ended <- status:
			default:
			}
			reply(agentapi.BuildStatus{Status: status, FailureReason: in.Reason})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(api.Close)
	s.URL = api.URL
	return s
}

// wait waits for the build to end and returns its status.
func (s *fakeHostService) wait(t *testing.T) string {
	t.Helper()
	select {
	case st := <-s.ended:
		return st
	case <-time.After(3 * time.Minute):
		t.Fatalf("the build did not end; log:\n%s", s.log())
		return ""
	}
}

func (s *fakeHostService) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

func (s *fakeHostService) claimAuth() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth
}
