package stepfunctions

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// TestAgentPathsOfTheStateMachine: a build for an agent pool waits in WaitForAgent with its
// task token stored on the build; an agent claims it (the agents' dispatcher, as the API runs
// it) and ends it through the lifecycle, whose end answers the token (SendTaskSuccess or
// SendTaskFailure); nothing claiming it within HeartbeatSeconds fails it as host lost; a cancel
// while it waits ends the wait. Each path ends the build and the execution.
func TestAgentPathsOfTheStateMachine(t *testing.T) {
	const pool = "win-big"
	tests := []struct {
		name   string
		opts   worldOptions
		agent  func(t *testing.T, w *world, b *kiln.Build) // what happens once the token is stored
		status kiln.BuildStatus
		reason string
	}{
		{name: "the agent completes", status: kiln.StatusComplete, agent: func(t *testing.T, w *world, b *kiln.Build) {
			claimed, _ := w.claimAsAgent(t, pool)
			w.completeAsAgent(t, claimed)
		}},
		// HeartbeatSeconds, scaled down to a second: the agent's heartbeats, which carry no
		// token, reach Step Functions with the build's stored one for three times as long.
		{name: "the agent's heartbeats keep it waiting", opts: worldOptions{heartbeat: time.Second}, status: kiln.StatusComplete,
			agent: func(t *testing.T, w *world, b *kiln.Build) {
				claimed, cred := w.claimAsAgent(t, pool)
				for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
					req, _ := http.NewRequest("POST", w.hostAPI+"/host/v1/heartbeat", nil)
					req.Header.Set("Authorization", "Bearer "+cred)
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					res.Body.Close()
					if res.StatusCode != http.StatusNoContent {
						t.Fatalf("heartbeat: %s", res.Status)
					}
				}
				w.completeAsAgent(t, claimed)
			}},
		{name: "the agent fails", status: kiln.StatusFailed, reason: "compile error", agent: func(t *testing.T, w *world, b *kiln.Build) {
			claimed, _ := w.claimAsAgent(t, pool)
			if _, err := w.lifecycle.Fail(context.Background(), claimed.OrganizationID, claimed.ID, "compile error"); err != nil {
				t.Fatal(err)
			}
		}},
		// HeartbeatSeconds, scaled down to a second.
		{name: "no agent claims it", opts: worldOptions{heartbeat: time.Second}, status: kiln.StatusFailed, reason: sfn.ReasonNoAgent + pool},
		{name: "cancel while it waits", status: kiln.StatusFailed, reason: "cancelled", agent: func(t *testing.T, w *world, b *kiln.Build) {
			if _, err := w.service.Cancel(context.Background(), w.org, b.ID); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.opts)
			b := w.trigger(t, w.poolSetting(t, kiln.PlatformWin64, "5.4", 0, pool), hostComplete)
			stored := w.waitFor(t, b.ID, "its task token", func(b *kiln.Build) bool { return b.TaskToken != "" || b.Status.Terminal() })
			if stored.TaskToken == "" {
				t.Fatalf("build ended %s (%q) before its task token was stored", stored.Status, stored.FailureReason)
			}
			if tt.agent != nil {
				tt.agent(t, w, b)
			}
			if exec := w.execution(t, b.ID); exec != "SUCCEEDED" {
				t.Errorf("execution ended %s, want SUCCEEDED", exec)
			}
			got := w.waitFor(t, b.ID, "its end", func(b *kiln.Build) bool { return b.Status.Terminal() })
			if got.Status != tt.status || !strings.HasPrefix(got.FailureReason, tt.reason) || (tt.reason == "" && got.FailureReason != "") {
				t.Errorf("build ended %s (%q), want %s (%q)", got.Status, got.FailureReason, tt.status, tt.reason)
			}
			if started, _ := filepath.Glob(filepath.Join(w.hostDir, "*")); len(started) != 0 {
				t.Errorf("CodeBuild builds started for an agent's build: %v", started)
			}
		})
	}
}

// TestHostedWindowsPath: on a deployment with hosted Windows hosts, a Win64 build without a
// pool waits in WaitForAgent in kiln's hosted pool, one of kiln's hosts claims it (held as its
// instance) and completes it, and the execution succeeds; no CodeBuild build starts.
func TestHostedWindowsPath(t *testing.T) {
	w := newWorld(t, worldOptions{hosted: true})
	b := w.trigger(t, w.setting(t, kiln.PlatformWin64, "5.4", 0), hostComplete)
	stored := w.waitFor(t, b.ID, "its task token", func(b *kiln.Build) bool { return b.TaskToken != "" || b.Status.Terminal() })
	if stored.TaskToken == "" || stored.AgentPool != kiln.HostedPoolWin64 || stored.WaitingFor() != "an agent in pool "+kiln.HostedPoolWin64 {
		t.Fatalf("build %s (%q) in pool %q, token stored %v", stored.Status, stored.FailureReason, stored.AgentPool, stored.TaskToken != "")
	}
	d := &agentpool.Dispatcher{Store: w.st, Lifecycle: w.lifecycle, Hosted: w.st}
	host := &kiln.Agent{Credential: kiln.Credential{ID: "i-0123456789abcdef0"}, Pool: kiln.HostedPoolWin64, Hosted: true}
	c, err := d.Claim(context.Background(), host, agentpool.Offer{Platforms: []kiln.Platform{kiln.PlatformWin64}, EngineVersions: []string{"5.4"}}, 0)
	if err != nil || c == nil || c.Build.ID != b.ID || c.Build.Host != "ec2:"+host.ID {
		t.Fatalf("hosted claim: %+v %v", c, err)
	}
	w.completeAsAgent(t, c.Build)
	if exec := w.execution(t, b.ID); exec != "SUCCEEDED" {
		t.Errorf("execution ended %s, want SUCCEEDED", exec)
	}
	if got := w.waitFor(t, b.ID, "its end", func(b *kiln.Build) bool { return b.Status.Terminal() }); got.Status != kiln.StatusComplete {
		t.Errorf("build ended %s (%q)", got.Status, got.FailureReason)
	}
	if started, _ := filepath.Glob(filepath.Join(w.hostDir, "*")); len(started) != 0 {
		t.Errorf("CodeBuild builds started for a hosted Windows build: %v", started)
	}
}

// TestHostedLinuxPath: on a deployment whose hosted Linux hosts provide 5.4 (and a CodeBuild
// image 5.3), a Linux 5.4.1 build without a pool waits in kiln's hosted Linux pool, where a
// Windows host does not get it and a Linux host does and completes it, with no CodeBuild build;
// a Linux 5.3 build still runs on CodeBuild; a Linux 5.5 build has neither and is unsupported.
func TestHostedLinuxPath(t *testing.T) {
	w := newWorld(t, worldOptions{hosted: true, linux: []string{"5.4"}})
	b := w.trigger(t, w.setting(t, kiln.PlatformLinux, "5.4.1", 0), hostComplete)
	stored := w.waitFor(t, b.ID, "its task token", func(b *kiln.Build) bool { return b.TaskToken != "" || b.Status.Terminal() })
	if stored.TaskToken == "" || stored.AgentPool != kiln.HostedPoolLinux {
		t.Fatalf("build %s (%q) in pool %q, token stored %v", stored.Status, stored.FailureReason, stored.AgentPool, stored.TaskToken != "")
	}
	d := &agentpool.Dispatcher{Store: w.st, Lifecycle: w.lifecycle, Hosted: w.st}
	offer := agentpool.Offer{Platforms: []kiln.Platform{kiln.PlatformLinux, kiln.PlatformWin64}, EngineVersions: []string{"5.4"}}
	windows := &kiln.Agent{Credential: kiln.Credential{ID: "i-0000000000000000a"}, Pool: kiln.HostedPoolWin64, Hosted: true}
	if c, err := d.Claim(context.Background(), windows, offer, 0); err != nil || c != nil {
		t.Fatalf("a Windows host claimed the Linux build: %+v %v", c, err)
	}
	linux := &kiln.Agent{Credential: kiln.Credential{ID: "i-0000000000000000b"}, Pool: kiln.HostedPoolLinux, Hosted: true}
	c, err := d.Claim(context.Background(), linux, offer, 0)
	if err != nil || c == nil || c.Build.ID != b.ID || c.Build.Host != "ec2:"+linux.ID {
		t.Fatalf("hosted Linux claim: %+v %v", c, err)
	}
	w.completeAsAgent(t, c.Build)
	if exec := w.execution(t, b.ID); exec != "SUCCEEDED" {
		t.Errorf("execution ended %s, want SUCCEEDED", exec)
	}
	if started, _ := filepath.Glob(filepath.Join(w.hostDir, "*")); len(started) != 0 {
		t.Errorf("CodeBuild builds started for a hosted Linux build: %v", started)
	}

	onImage := w.trigger(t, w.setting(t, kiln.PlatformLinux, "5.3", 0), hostComplete)
	if got := w.waitFor(t, onImage.ID, "its end", func(b *kiln.Build) bool { return b.Status.Terminal() }); got.Status != kiln.StatusComplete || got.AgentPool != "" {
		t.Errorf("Linux 5.3 build ended %s (%q) in pool %q, want complete on CodeBuild", got.Status, got.FailureReason, got.AgentPool)
	}
	neither := w.trigger(t, w.setting(t, kiln.PlatformLinux, "5.5", 0), hostComplete)
	if got := w.waitFor(t, neither.ID, "its end", func(b *kiln.Build) bool { return b.Status.Terminal() }); got.Status != kiln.StatusFailed || !strings.Contains(got.FailureReason, "no build host image") {
		t.Errorf("Linux 5.5 build ended %s (%q), want failed: unsupported", got.Status, got.FailureReason)
	}
}

// completeAsAgent completes the claimed build as its agent's upload does.
func (w *world) completeAsAgent(t *testing.T, claimed *kiln.Build) {
	t.Helper()
	a := &kiln.Artifact{BuildID: claimed.ID, OrganizationID: claimed.OrganizationID, ProjectID: claimed.ProjectID,
		BuildSettingID: claimed.BuildSettingID, Platform: claimed.Platform, BuildType: claimed.BuildType, UEVersion: claimed.UEVersion,
		Branch: claimed.Branch, Key: claimed.OrganizationID + "/" + claimed.ID + ".tar.gz", SizeBytes: 1, CreatedAt: time.Now().UTC()}
	if _, err := w.lifecycle.Complete(context.Background(), a); err != nil {
		t.Fatal(err)
	}
}

// claimAsAgent claims the pending build of the pool as an agent of the organization does, and
// answers it with its host credential.
func (w *world) claimAsAgent(t *testing.T, pool string) (*kiln.Build, string) {
	t.Helper()
	d := &agentpool.Dispatcher{Store: w.st, Lifecycle: w.lifecycle}
	_, a := auth.NewAgent(w.org, "box", pool, time.Now())
	if err := w.st.CreateAgent(context.Background(), a); err != nil { // a claim reads its agent again
		t.Fatal(err)
	}
	c, err := d.Claim(context.Background(), a, agentpool.Offer{Platforms: []kiln.Platform{kiln.PlatformWin64}, EngineVersions: []string{"5.4"}}, 0)
	if err != nil || c == nil {
		t.Fatalf("claim: %v, %v", c, err)
	}
	return c.Build, c.Credential
}
