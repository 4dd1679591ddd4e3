package sfn

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// TestDefinitionIsPlainASL: the definition is JSON, every state is reachable and leads somewhere
// that exists, every task has a timeout and a Catch, and it uses nothing aws-local-stepfunctions
// cannot run (JSONata, Assign); the CodeBuild host's task has no HeartbeatSeconds and passes the
// host the claim's fields; the agent's waits with its task token.
func TestDefinitionIsPlainASL(t *testing.T) {
	var def struct {
		StartAt        string
		TimeoutSeconds int
		States         map[string]map[string]any
	}
	text := Definition()
	if err := json.Unmarshal([]byte(text), &def); err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"JSONata", "\"Assign\"", "{%"} {
		if strings.Contains(text, banned) {
			t.Errorf("the definition uses %s", banned)
		}
	}
	if def.TimeoutSeconds <= 0 {
		t.Error("no execution timeout")
	}
	reached := map[string]bool{}
	hosts, agents := 0, 0
	var walk func(name string)
	walk = func(name string) {
		if reached[name] {
			return
		}
		s, ok := def.States[name]
		if !ok {
			t.Fatalf("state %q is named but not defined", name)
		}
		reached[name] = true
		var next []string
		if n, ok := s["Next"].(string); ok {
			next = append(next, n)
		}
		if n, ok := s["Default"].(string); ok {
			next = append(next, n)
		}
		for _, key := range []string{"Choices", "Catch"} {
			list, _ := s[key].([]any)
			for _, c := range list {
				next = append(next, c.(map[string]any)["Next"].(string))
			}
		}
		if s["Type"] == "Task" {
			if s["TimeoutSeconds"] == nil && s["TimeoutSecondsPath"] == nil {
				t.Errorf("task %s has no timeout", name)
			}
			if s["Catch"] == nil {
				t.Errorf("task %s has no Catch", name)
			}
		}
		if s["Resource"] == "arn:aws:states:::codebuild:startBuild.sync" {
			hosts++
			// Step Functions counts HeartbeatSeconds from the StartBuild call: CodeBuild's
			// queue and the image pull would count as the host's silence.
			if _, ok := s["HeartbeatSeconds"]; ok {
				t.Errorf("host task %s: HeartbeatSeconds %v, want none (the service watches the host's silence)", name, s["HeartbeatSeconds"])
			}
			env := map[string]string{}
			params, _ := s["Parameters"].(map[string]any)
			list, _ := params["EnvironmentVariablesOverride"].([]any)
			for _, v := range list {
				v := v.(map[string]any)
				env[v["Name"].(string)], _ = v["Value.$"].(string)
			}
			if env[agentapi.EnvHostCredential] == "" || env[agentapi.EnvHostURL] == "" || env[agentapi.EnvBuildID] == "" {
				t.Errorf("host task %s: environment %v, want the claim's fields", name, env)
			}
		}
		if s["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken" {
			agents++
			beat, _ := s["HeartbeatSeconds"].(float64)
			limit, _ := s["TimeoutSeconds"].(float64)
			if beat <= 0 || beat >= limit {
				t.Errorf("agent task %s: HeartbeatSeconds %v, want more than 0 and less than its TimeoutSeconds %v", name, s["HeartbeatSeconds"], s["TimeoutSeconds"])
			}
			params, _ := s["Parameters"].(map[string]any)
			payload, _ := params["Payload"].(map[string]any)
			if payload["task"] != TaskAwait || payload["taskToken.$"] != "$$.Task.Token" || params["FunctionName"] != "${"+PlaceholderTaskFunction+"}" {
				t.Errorf("agent task %s: parameters %v, want the await task with the task token", name, params)
			}
		}
		for _, n := range next {
			walk(n)
		}
	}
	walk(def.StartAt)
	if hosts == 0 {
		t.Error("no state runs a CodeBuild host")
	}
	if agents == 0 {
		t.Error("no state waits for an agent")
	}
	for name := range def.States {
		if !reached[name] {
			t.Errorf("state %s is never reached", name)
		}
	}
}

// TestStartBuildRetry: RunOnCodeBuild retries CodeBuild refusing StartBuild (throttling, the
// account's limit), with a backoff, and nothing else (a build that ran and failed is its host's
// result); the longest wait of its retries is StartBuildRetryWait, and the host's start grace
// covers those retries, CodeBuild's queue and the image pull.
func TestStartBuildRetry(t *testing.T) {
	var def struct {
		States map[string]struct {
			Retry []struct {
				ErrorEquals     []string
				IntervalSeconds int
				MaxAttempts     int
				BackoffRate     float64
			}
		}
	}
	if err := json.Unmarshal([]byte(Definition()), &def); err != nil {
		t.Fatal(err)
	}
	retry := def.States[StateStartHost].Retry
	if len(retry) != 1 {
		t.Fatalf("%s: %d retriers, want 1", StateStartHost, len(retry))
	}
	r := retry[0]
	for _, want := range []string{"CodeBuild.ThrottlingException", "CodeBuild.AWSCodeBuildException"} {
		if !slices.Contains(r.ErrorEquals, want) {
			t.Errorf("Retry does not take %s: %v", want, r.ErrorEquals)
		}
	}
	if slices.Contains(r.ErrorEquals, CodeBuildQuotaError) {
		t.Errorf("Retry takes %s: a build refused for the quota waits its turn (WaitForCapacity)", CodeBuildQuotaError)
	}
	for _, e := range r.ErrorEquals {
		if strings.HasPrefix(e, "States.") {
			t.Errorf("Retry takes %s: a failed or timed-out host build must not start another", e)
		}
	}
	if r.IntervalSeconds < 10 || r.BackoffRate < 2 || r.MaxAttempts < 3 {
		t.Errorf("Retry %+v: want a backoff (interval 10 s or more, rate 2 or more, 3 attempts or more)", r)
	}
	total, wait := 0.0, float64(r.IntervalSeconds)
	for range r.MaxAttempts {
		total += wait
		wait *= r.BackoffRate
	}
	if got := time.Duration(total) * time.Second; got != StartBuildRetryWait {
		t.Errorf("the retries wait %v in all, StartBuildRetryWait says %v", got, StartBuildRetryWait)
	}
	if min := StartBuildRetryWait + HostQueuedTimeoutMinutes*time.Minute + 10*time.Minute; HostStartGrace < min {
		t.Errorf("HostStartGrace %v does not cover the retries, the queue and the image pull (%v)", HostStartGrace, min)
	}
}

// TestSlotWaitHistoryIsBounded: a build that waits for a slot for the execution's whole
// MaxExecutionSeconds loops Claim → Route → WaitForSlot with SlotWait's growing waits; its
// history stays within SlotWaitWorstEvents, well under Step Functions' 25,000-event quota (a fixed
// 20 s wait reached it after about 15 h). WaitForSlot waits what the claim answers.
func TestSlotWaitHistoryIsBounded(t *testing.T) {
	const historyQuota = 25_000
	loops := 0
	for waited := time.Duration(0); waited < MaxExecutionSeconds*time.Second; loops++ {
		wait := SlotWait(waited)
		if wait < SlotWaitSeconds*time.Second || wait > SlotWaitMaxSeconds*time.Second {
			t.Fatalf("SlotWait(%v) = %v, want %d s to %d s", waited, wait, SlotWaitSeconds, SlotWaitMaxSeconds)
		}
		waited += wait
	}
	events := loops*SlotLoopEvents + 30
	t.Logf("25 h of waiting for a slot: %d loops, about %d history events", loops, events)
	if events > SlotWaitWorstEvents || SlotWaitWorstEvents >= historyQuota {
		t.Errorf("%d loops make %d events; SlotWaitWorstEvents says %d (quota %d)", loops, events, SlotWaitWorstEvents, historyQuota)
	}
	if fixed := MaxExecutionSeconds / SlotWaitSeconds * SlotLoopEvents; fixed < historyQuota {
		t.Errorf("a fixed %d s wait would make only %d events: the test's premise is wrong", SlotWaitSeconds, fixed)
	}
	var def struct {
		States map[string]map[string]any
	}
	if err := json.Unmarshal([]byte(Definition()), &def); err != nil {
		t.Fatal(err)
	}
	if w := def.States[StateWaitForSlot]; w["SecondsPath"] != "$.host.waitSeconds" {
		t.Errorf("%s: %v, want it to wait the claim's waitSeconds", StateWaitForSlot, w)
	}
}

// TestTheClaimAnswersAGrowingSlotWait: a build over its organization's limit is answered
// HostWait with SlotWait of how long it has been pending.
func TestTheClaimAnswersAGrowingSlotWait(t *testing.T) {
	for _, tt := range []struct {
		pending time.Duration
		want    int
	}{{0, SlotWaitSeconds}, {10 * time.Minute, 75}, {3 * time.Hour, SlotWaitMaxSeconds}} {
		t.Run(tt.pending.String(), func(t *testing.T) {
			ctx := context.Background()
			st := storefixture.SQLite(t)
			now := time.Now().UTC().Truncate(time.Millisecond)
			org, _ := storefixture.Org(t, st, "", now)
			b := storefixture.Build(t, st, org.ID, kiln.StatusPending, now.Add(-tt.pending))
			tasks := &Tasks{Store: st, Lifecycle: &builds.Lifecycle{Builds: st, Projects: st, Artifacts: st}, Images: map[string]string{"5.3": "kiln-engine:5.3"},
				Slots: noSlot{}, Now: func() time.Time { return now }}
			out, err := tasks.Handle(ctx, TaskInput{Task: TaskClaim, OrganizationID: b.OrganizationID, BuildID: b.ID, Execution: b.ID})
			if err != nil || out.Kind != HostWait || out.WaitSeconds != tt.want {
				t.Fatalf("claim: %+v, %v; want to wait %d s", out, err, tt.want)
			}
		})
	}
}

// noSlot never has a free slot.
type noSlot struct{}

func (noSlot) MayRun(context.Context, *kiln.Build) (bool, error) { return false, nil }

// TestAQuotaRefusalWaitsForCapacity: CodeBuild refusing the host for the account's quota is
// caught before any other error and leads, through WaitForCapacity (the claim's waitSeconds),
// back to the claim: the build waits its turn and never fails for the quota.
func TestAQuotaRefusalWaitsForCapacity(t *testing.T) {
	var def struct {
		States map[string]struct {
			Type        string
			SecondsPath string
			Next        string
			Catch       []struct {
				ErrorEquals []string
				Next        string
			}
		}
	}
	if err := json.Unmarshal([]byte(Definition()), &def); err != nil {
		t.Fatal(err)
	}
	catch := def.States[StateStartHost].Catch
	if len(catch) < 2 || !slices.Equal(catch[0].ErrorEquals, []string{CodeBuildQuotaError}) || catch[0].Next != StateWaitForCapacity {
		t.Fatalf("%s's first Catch: %+v, want %s to %s", StateStartHost, catch, CodeBuildQuotaError, StateWaitForCapacity)
	}
	w := def.States[StateWaitForCapacity]
	if w.Type != "Wait" || w.SecondsPath != "$.host.waitSeconds" || w.Next != StateClaim {
		t.Errorf("%s: %+v, want a Wait of $.host.waitSeconds back to %s", StateWaitForCapacity, w, StateClaim)
	}
}
