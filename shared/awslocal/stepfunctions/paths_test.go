package stepfunctions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// TestEveryPathOfTheStateMachine runs the deployment's definition on aws-local-stepfunctions,
// with the real task and ended handlers on a real store and the test host standing in for
// `kiln agent run` in the CodeBuild stand-in: each path ends the build as it should, ends the
// execution, and leaves no process behind.
func TestEveryPathOfTheStateMachine(t *testing.T) {
	tests := []struct {
		name      string
		opts      worldOptions
		platform  kiln.Platform
		version   string
		limit     int    // the setting's timeoutMinutes
		mode      string // the host's behaviour
		stop      func(t *testing.T, w *world, b *kiln.Build)
		hostBuild string // the status its CodeBuild build ended with ("": not checked)
		after     func(t *testing.T, w *world, b *kiln.Build)
		status    kiln.BuildStatus
		reason    string
		execution string
	}{
		{name: "success", mode: hostComplete, status: kiln.StatusComplete, execution: "SUCCEEDED"},
		{name: "the build fails", mode: hostFail, status: kiln.StatusFailed, reason: hostReason, execution: "SUCCEEDED"},
		{name: "the host dies", mode: hostDie, status: kiln.StatusFailed, reason: "host lost: its CodeBuild build ended FAILED", execution: "SUCCEEDED"},
		{name: "the host ends without a result", mode: hostSilent, status: kiln.StatusFailed, reason: sfn.ReasonHostNoReply, execution: "SUCCEEDED"},
		{name: "timeout", opts: worldOptions{minute: 20 * time.Millisecond}, limit: 1, mode: hostSleep,
			status: kiln.StatusFailed, reason: sfn.ReasonTimeLimit, execution: "SUCCEEDED"},
		// RunOnCodeBuild has no HeartbeatSeconds (the service watches the host's silence from
		// its reports): a host reporting to the API only, for three times the heartbeat timeout
		// the stand-in enforces on states that have one, runs on and completes.
		{name: "no heartbeat timeout on the CodeBuild host", opts: worldOptions{heartbeat: time.Second}, mode: hostBeatLong, hostBuild: "SUCCEEDED",
			status: kiln.StatusComplete, execution: "SUCCEEDED"},
		{name: "Win64", platform: kiln.PlatformWin64, mode: hostComplete, status: kiln.StatusFailed, reason: sfn.ReasonWin64, execution: "SUCCEEDED"},
		{name: "an engine version without an image", version: "5.9", mode: hostComplete, status: kiln.StatusFailed,
			reason: `this deployment has no build host image for Unreal Engine "5.9", the engine version of build setting `, execution: "SUCCEEDED"},
		{name: "the claim fails", opts: worldOptions{failClaim: true}, mode: hostComplete, status: kiln.StatusFailed,
			reason: "the build's workflow ended FAILED before the build did", execution: "FAILED"},
		{name: "cancel", mode: hostSleep, status: kiln.StatusFailed, reason: "cancelled", execution: "ABORTED",
			stop: func(t *testing.T, w *world, b *kiln.Build) {
				if _, err := w.service.Cancel(context.Background(), w.org, b.ID); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "supersede", mode: hostSleep, status: kiln.StatusSuperseded, execution: "ABORTED",
			stop: func(t *testing.T, w *world, b *kiln.Build) {
				s, err := w.st.GetBuildSetting(context.Background(), w.org, w.project.ID, b.BuildSettingID)
				if err != nil {
					t.Fatal(err)
				}
				next := w.trigger(t, s, hostComplete)
				if got := w.waitFor(t, next.ID, "complete", func(b *kiln.Build) bool { return b.Status.Terminal() }); got.Status != kiln.StatusComplete {
					t.Errorf("the superseding build ended %s (%s)", got.Status, got.FailureReason)
				}
				if got := w.execution(t, next.ID); got != "SUCCEEDED" {
					t.Errorf("the superseding build's execution ended %s", got)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.opts)
			platform, version := tt.platform, tt.version
			if platform == "" {
				platform = kiln.PlatformLinux
			}
			if version == "" {
				version = "5.3"
			}
			b := w.trigger(t, w.setting(t, platform, version, tt.limit), tt.mode)
			if tt.stop != nil {
				w.waitFor(t, b.ID, "its host to report", func(b *kiln.Build) bool { return strings.HasPrefix(b.Host, sfn.HostPrefix) })
				tt.stop(t, w, b)
			}
			got := w.waitFor(t, b.ID, "its end", func(b *kiln.Build) bool { return b.Status.Terminal() })
			if exec := w.execution(t, b.ID); exec != tt.execution {
				t.Errorf("execution ended %s, want %s", exec, tt.execution)
			}
			got = w.waitFor(t, b.ID, "its end", func(b *kiln.Build) bool { return b.Status.Terminal() })
			if got.Status != tt.status || !strings.HasPrefix(got.FailureReason, tt.reason) || (tt.reason == "" && got.FailureReason != "") {
				t.Errorf("build ended %s (%q), want %s (%q)", got.Status, got.FailureReason, tt.status, tt.reason)
			}
			if tt.hostBuild != "" {
				if status := w.hostBuild(t, got); status != tt.hostBuild {
					t.Errorf("its CodeBuild build ended %s, want %s", status, tt.hostBuild)
				}
			}
			if tt.after != nil {
				tt.after(t, w, got)
			}
			w.noCredentialLeft(t)
			w.noProcessLeft(t)
		})
	}
}
