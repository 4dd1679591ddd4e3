package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
)

// fakeHostAPI answers a claim with one build (then nothing), the build's start with a job, and
// records the reason its host fails it with; heartbeats, logs and progress are answered with {},
// anything else (an upload) with 404.
type fakeHostAPI struct {
	mu      sync.Mutex
	claimed bool
	reason  string
	failed  chan struct{}
}

func (f *fakeHostAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case agentapi.ClaimPath:
		if f.claimed {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		f.claimed = true
		_ = json.NewEncoder(w).Encode(agentapi.ClaimAnswer{BuildID: "b1", HostCredential: "kbh.k1.b1.secret"})
	case "/host/v1/start":
		_ = json.NewEncoder(w).Encode(agentapi.Job{
			Build:   agentapi.JobBuild{ID: "b1", OrganizationID: "k1", ProjectID: "p1", BuildSettingID: "s1", Platform: "Linux", BuildType: "Shipping", Branch: "main", UEVersion: "5.4"},
			Project: agentapi.JobProject{ID: "p1", Name: "Shooter"},
		})
	case "/host/v1/fail":
		var in agentapi.FailRequest
		_ = json.NewDecoder(r.Body).Decode(&in)
		if f.reason == "" {
			f.reason = in.Reason
			close(f.failed)
		}
		_ = json.NewEncoder(w).Encode(agentapi.BuildStatus{Status: "failed", FailureReason: in.Reason})
	case "/host/v1/heartbeat", "/host/v1/logs", "/host/v1/progress":
		_, _ = w.Write([]byte("{}"))
	default:
		http.NotFound(w, r)
	}
}

// TestAgentAppliesKilnServesBuildLimits: `kiln agent` and `kiln agent run` read KILN_BUILD_MEMORY,
// KILN_BUILD_PIDS, KILN_BUILD_CPU_WEIGHT and KILN_DISK_RESERVE as kiln serve does and their
// builds run under them: with less free space than the reserve on the work directory's volume a
// claimed build does not start; a setting that does not parse stops the agent at start. A hosted
// host (`kiln agent run`) keeps the reserve but makes no control groups: its container or
// instance is the build's bound.
func TestAgentAppliesKilnServesBuildLimits(t *testing.T) {
	engines := fakeEngines(t, "5.4")
	for _, tc := range []struct {
		name   string
		args   func(url string) []string
		env    func(url string) map[string]string
		groups bool
	}{
		{"kiln agent", func(url string) []string {
			return []string{"agent", "--url", url, "--token", "kagent_x", "--engines", engines, "--workdir", t.TempDir()}
		}, func(string) map[string]string { return map[string]string{"KILN_SANDBOX": "off"} }, true},
		{"kiln agent run", func(string) []string { return []string{"agent", "run"} }, func(url string) map[string]string {
			return map[string]string{"KILN_HOST_URL": url, "KILN_HOST_CREDENTIAL": "kbh.k1.b1.secret", "KILN_ENGINES": engines, "KILN_HOST_WORKDIR": t.TempDir()}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeHostAPI{failed: make(chan struct{})}
			srv := httptest.NewServer(api)
			defer srv.Close()
			env := tc.env(srv.URL)
			env["KILN_DISK_RESERVE"], env["KILN_BUILD_MEMORY"], env["KILN_BUILD_PIDS"] = "99.99%", "1GiB", "500"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr bytes.Buffer
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, tc.args(srv.URL), func(k string) string { return env[k] }, &bytes.Buffer{}, &stderr)
			}()
			select {
			case <-api.failed:
			case err := <-done:
				t.Fatalf("%s ended before failing its build: %v\n%s", tc.name, err, stderr.String())
			case <-time.After(30 * time.Second):
				t.Fatalf("%s never failed its build\n%s", tc.name, stderr.String())
			}
			cancel()
			<-done
			api.mu.Lock()
			reason := api.reason
			api.mu.Unlock()
			if !strings.HasPrefix(reason, "disk space: the data volume has ") || !strings.HasSuffix(reason, "; the build did not start") {
				t.Errorf("the build failed with %q, want the disk reserve's reason", reason)
			}
			if log := stderr.String(); strings.Contains(log, `msg="build limits" memory="1 GiB" pids=500`) != tc.groups {
				t.Errorf("the start log says the build limits: %v, want %v:\n%s", !tc.groups, tc.groups, log)
			}

			env["KILN_BUILD_PIDS"] = "lots"
			bad, stop := context.WithTimeout(context.Background(), 5*time.Second) // an agent that starts runs until stopped
			defer stop()
			err := run(bad, tc.args(srv.URL), func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), "KILN_BUILD_PIDS") {
				t.Errorf("KILN_BUILD_PIDS=lots: %v, want an error naming the setting", err)
			}
		})
	}
}
