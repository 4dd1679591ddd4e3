// Package sfn runs kiln's builds on AWS Step Functions: the state machine of one build (its
// Amazon States Language definition, as Go data, used by the CDK stack and by kiln aws-local),
// the task inputs and outputs its Lambda tasks exchange, and the workflow that starts and stops
// executions for builds.Service.
package sfn

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
)

// Placeholders in the definition, filled by the deployment (CDK's DefinitionSubstitutions, or
// kiln aws-local): the task Lambda's ARN and the CodeBuild project of the Linux build hosts.
const (
	PlaceholderTaskFunction = "TaskFunctionArn"
	PlaceholderHostProject  = "HostProjectName"
)

// State names of the definition. kiln aws-local maps its task states to local handlers by name.
const (
	StateClaim       = "Claim"
	StateRoute       = "Route"
	StateStartHost   = "RunOnCodeBuild"
	StateAwaitAgent  = "WaitForAgent"
	StateFinish      = "Finish"
	StateHostEnded   = "HostEnded"
	StateUnsupported = "Unsupported"
	StateGiveUp      = "GiveUp"
	StateDone        = "Done"
	StateWaitForSlot = "WaitForSlot"
	// StateWaitForCapacity: CodeBuild refused the host for the account's quota; the build stays
	// pending, waits and is claimed again (its turn among the organizations' builds).
	StateWaitForCapacity = "WaitForCapacity"
)

// Host kinds the claim answers with: where the build runs.
const (
	HostCodeBuild = "codebuild"
	// HostAgent: the build waits for an agent of its pool, which claims it itself.
	HostAgent       = "agent"
	HostUnsupported = "unsupported"
	// HostBuildEnded: the build ended before its claim (cancelled, superseded); nothing runs.
	HostBuildEnded = "ended"
	// HostWait: the organization's plan allows no more running builds now; the build stays
	// pending, waits the answer's WaitSeconds (SlotWait) and is claimed again.
	HostWait = "wait"
)

// SlotWaitSeconds is how long a build over its organization's concurrency limit first waits
// before its claim is tried again; SlotWaitMaxSeconds the longest it ever waits (see SlotWait).
const (
	SlotWaitSeconds    = 20
	SlotWaitMaxSeconds = 300
)

// SlotWait is how long a build that has been pending for pendingFor waits for a slot before its
// next claim: SlotWaitSeconds at first, then an eighth of its wait so far, at most
// SlotWaitMaxSeconds. So a build's waits grow with its wait, and its execution's history stays
// bounded for its whole MaxExecutionSeconds (Step Functions fails an execution at 25,000 history
// events, https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html): one wait is
// about SlotLoopEvents events, so 25 h of waiting is at most SlotWaitWorstEvents events
// (TestSlotWaitHistoryIsBounded computes it), where a fixed 20 s wait reached the quota in
// about 15 h.
func SlotWait(pendingFor time.Duration) time.Duration {
	return min(max(pendingFor/8, SlotWaitSeconds*time.Second), SlotWaitMaxSeconds*time.Second)
}

// SlotLoopEvents is the history events of one Claim → Route → WaitForSlot loop in AWS: the
// claim task's TaskStateEntered, TaskScheduled, TaskStarted, TaskSucceeded and TaskStateExited,
// Route's ChoiceStateEntered and ChoiceStateExited, WaitForSlot's WaitStateEntered and
// WaitStateExited.
const SlotLoopEvents = 9

// SlotWaitWorstEvents bounds the history of an execution that waits for a slot for its whole
// MaxExecutionSeconds: 323 loops of SlotLoopEvents events, plus the execution's own few.
const SlotWaitWorstEvents = 323*SlotLoopEvents + 30

// MaxExecutionSeconds bounds an execution: the longest build time limit a setting can have
// (24 h) plus an hour for the host to start and report.
const MaxExecutionSeconds = 25 * 3600

// CodeBuildTransientErrors are the errors of RunOnCodeBuild its Retry takes as CodeBuild refusing
// StartBuild for a while (throttling, the account's limit of concurrently running builds),
// not as the host failing: the optimized integration reports a CodeBuild API exception as
// "CodeBuild.<exception>" (AccountLimitExceededException is the StartBuild error CodeBuild's
// API Reference lists for a limit; throttling as CodeBuild.ThrottlingException or, as public
// executions show it, CodeBuild.AWSCodeBuildException). An AccessDeniedException (the role
// lacks a permission) is not retried: it fails at once. A build that ran and failed is
// States.TaskFailed, never retried: its host already reported.
var CodeBuildTransientErrors = []string{"CodeBuild.AWSCodeBuildException", "CodeBuild.ThrottlingException"}

// CodeBuildQuotaError is CodeBuild refusing StartBuild for the account's limits
// (AccountLimitExceededException: its concurrent builds and their queue are full). It is not
// retried in place: the build waits pending (WaitForCapacity, SlotWait) and claims again, so it
// takes its turn among the organizations' builds (Capacity) and never fails for the quota.
const CodeBuildQuotaError = "CodeBuild.AccountLimitExceededException"

// The RunOnCodeBuild Retry's backoff: 30 s, then doubling, five retries.
const (
	startBuildRetryIntervalSeconds = 30
	startBuildRetryMaxAttempts     = 5
	startBuildRetryBackoffRate     = 2
)

// The Retry of a task throttled by AWS (ErrorThrottled, after the SDK's own retries): 3 s, then
// doubling up to a minute, eight retries, with full jitter; at most 3+6+12+24+48+60+60+60 = 273 s
// in all (ThrottleRetryWait), well within the time a build waits for its host anyway.
const (
	throttleRetryIntervalSeconds = 3
	throttleRetryMaxAttempts     = 8
	throttleRetryBackoffRate     = 2
	throttleRetryMaxDelaySeconds = 60
)

// ThrottleRetryWait is the longest a task's throttling retries wait in all (TestThrottledTasksRetry
// computes it from the definition).
const ThrottleRetryWait = 273 * time.Second

// StartBuildRetryWait is the longest RunOnCodeBuild's Retry waits in all before its last attempt
// (30 + 60 + 120 + 240 + 480 s; TestStartBuildRetry computes it from the definition).
const StartBuildRetryWait = 930 * time.Second

// HostQueuedTimeoutMinutes is the CodeBuild project's queued timeout: a host build waiting longer
// than this in CodeBuild's queue (the account's concurrency quota reached) is ended by CodeBuild,
// and the build fails as host lost.
const HostQueuedTimeoutMinutes = 30

// hostImagePull is what the host's start may take once CodeBuild runs it: provisioning, the pull
// of the engine image (tens of GB), until `kiln agent run` reports.
const hostImagePull = 15 * time.Minute

// AgentHeartbeatSeconds is the WaitForAgent state's HeartbeatSeconds. Until an agent claims the
// build nothing heartbeats, so it is first the time an agent of the pool has to claim it: 30
// minutes, kiln serve's default wait for an agent (KILN_AGENT_WAIT) — an agent busy with another
// build, or being restarted, claims it once free. Once claimed, the agent's heartbeats (every
// 10 s, relayed by the API with the build's stored task token) reset it; a claimed build whose
// agent falls silent fails sooner anyway, by the schedule tick's heartbeat check (30 s), which
// then stops the execution.
const AgentHeartbeatSeconds = 1800

// taskTimeoutSeconds bounds one call of the task Lambda.
const taskTimeoutSeconds = 60

type obj = map[string]any

// Definition is the state machine of one build, as ASL JSON with ${TaskFunctionArn} and
// ${HostProjectName} left for the deployment to fill:
//
//	Claim ─> Route ─┬─ codebuild ─> RunOnCodeBuild (.sync, retries CodeBuild's throttling) ─> Finish ─> Done
//	                │                      ├─ the account's quota ─> WaitForCapacity (SlotWait) ─> Claim
//	                │                      └─ any other error ─> HostEnded ─> Done
//	                ├─ agent ─> WaitForAgent (.waitForTaskToken) ─> Finish ─> Done
//	                │                      └─ any error ─> HostEnded ─> Done
//	                ├─ ended (before its claim) ─> Done
//	                ├─ wait (no slot of the plan free) ─> WaitForSlot (20 s to 5 min, SlotWait) ─> Claim
//	                └─ otherwise ─> Unsupported ─> Done
//
// Every Lambda task retries Lambda's transient errors and its own throttled AWS calls
// (ErrorThrottled) and otherwise goes to GiveUp, which fails
// the execution; the execution-ended rule then fails the build (see EndedEvent), so a build never
// stays running after its execution ended. It uses no JSONata and no Assign.
func Definition() string {
	// Lambda's transient errors, and the task's own calls throttled by AWS (ErrorThrottled),
	// which every Lambda task retries.
	lambdaRetry := []obj{{
		"ErrorEquals":     []string{"Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException", "Lambda.TooManyRequestsException"},
		"IntervalSeconds": 2, "MaxAttempts": 4, "BackoffRate": 2,
	}, {
		"ErrorEquals":     []string{ErrorThrottled},
		"IntervalSeconds": throttleRetryIntervalSeconds, "MaxAttempts": throttleRetryMaxAttempts,
		"BackoffRate": throttleRetryBackoffRate, "MaxDelaySeconds": throttleRetryMaxDelaySeconds,
		// Full jitter: tasks throttled together (a burst) do not all come back at once.
		"JitterStrategy": "FULL",
	}}
	lambdaTask := func(task, next string, extra obj) obj {
		params := obj{"task": task, "organizationId.$": "$.organizationId", "buildId.$": "$.buildId", "execution.$": "$$.Execution.Name"}
		for k, v := range extra {
			params[k] = v
		}
		s := obj{
			"Type": "Task", "Resource": "${" + PlaceholderTaskFunction + "}", "Parameters": params,
			"TimeoutSeconds": taskTimeoutSeconds,
			"Retry":          lambdaRetry,
			"Catch":          []obj{{"ErrorEquals": []string{"States.ALL"}, "ResultPath": "$.error", "Next": StateGiveUp}},
		}
		if next == "" {
			s["End"] = true
		} else {
			s["Next"] = next
		}
		return s
	}
	claim := lambdaTask(TaskClaim, StateRoute, nil)
	claim["ResultPath"] = "$.host"
	finish := lambdaTask(TaskFinish, StateDone, nil)
	finish["ResultPath"] = nil
	hostEnded := lambdaTask(TaskFinish, StateDone, obj{"error.$": "$.error"})
	hostEnded["ResultPath"] = nil
	unsupported := lambdaTask(TaskUnsupported, StateDone, obj{"reason.$": "$.host.reason"})
	unsupported["ResultPath"] = nil

	def := obj{
		"Comment":        "kiln: one build, from its claim to its end",
		"StartAt":        StateClaim,
		"TimeoutSeconds": MaxExecutionSeconds,
		"States": obj{
			StateClaim:           claim,
			StateWaitForSlot:     obj{"Type": "Wait", "SecondsPath": "$.host.waitSeconds", "Next": StateClaim},
			StateWaitForCapacity: obj{"Type": "Wait", "SecondsPath": "$.host.waitSeconds", "Next": StateClaim},
			StateRoute: obj{
				"Type": "Choice",
				"Choices": []obj{
					{"Variable": "$.host.kind", "StringEquals": HostCodeBuild, "Next": StateStartHost},
					{"Variable": "$.host.kind", "StringEquals": HostAgent, "Next": StateAwaitAgent},
					{"Variable": "$.host.kind", "StringEquals": HostBuildEnded, "Next": StateDone},
					{"Variable": "$.host.kind", "StringEquals": HostWait, "Next": StateWaitForSlot},
				},
				"Default": StateUnsupported,
			},
			StateStartHost: obj{
				"Type":     "Task",
				"Resource": "arn:aws:states:::codebuild:startBuild.sync",
				"Parameters": obj{
					"ProjectName":                "${" + PlaceholderHostProject + "}",
					"ImageOverride.$":            "$.host.image",
					"TimeoutInMinutesOverride.$": "$.host.timeoutMinutes",
					// A fixed list (CodeBuild takes Name/Value/Type objects): the claim's answer. The
					// credential is a PARAMETER_STORE variable: its value here is the parameter's
					// name, which CodeBuild resolves with the project's role when the build starts,
					// so the credential is in no execution's input, output or history. No task
					// token: without HeartbeatSeconds nothing waits for the host's heartbeats.
					"EnvironmentVariablesOverride": []obj{
						{"Name": agentapi.EnvHostURL, "Value.$": "$.host.hostUrl", "Type": "PLAINTEXT"},
						{"Name": agentapi.EnvHostCredential, "Value.$": "$.host.credentialParameter", "Type": "PARAMETER_STORE"},
						{"Name": agentapi.EnvBuildID, "Value.$": "$.host.buildId", "Type": "PLAINTEXT"},
					},
				},
				// The host's own time limit ends the build first, CodeBuild's timeout (the
				// claim's timeoutMinutes) a host that cannot report at all; this bounds the wait
				// as the execution does. (A static value: aws-local-stepfunctions reads a
				// TimeoutSecondsPath from the Parameters, AWS from the state's input.)
				"TimeoutSeconds": MaxExecutionSeconds,
				// No HeartbeatSeconds: Step Functions would count it from the StartBuild call, so
				// CodeBuild's queue and the image pull would count as the host's silence. The host's
				// silence is watched by the service from its own reports (HostStartGrace before
				// the first, kiln.HeartbeatTimeout after each: the schedule tick fails the build
				// and stops this execution and its CodeBuild build), so the host gets no task
				// token. CodeBuild refusing StartBuild for a while is retried with backoff.
				"Retry": []obj{{
					"ErrorEquals":     CodeBuildTransientErrors,
					"IntervalSeconds": startBuildRetryIntervalSeconds, "MaxAttempts": startBuildRetryMaxAttempts,
					"BackoffRate": startBuildRetryBackoffRate,
				}},
				"ResultPath": nil, // CodeBuild's answer is large and says nothing the build needs
				"Catch": []obj{
					{"ErrorEquals": []string{CodeBuildQuotaError}, "ResultPath": "$.refused", "Next": StateWaitForCapacity},
					{"ErrorEquals": []string{"States.ALL"}, "ResultPath": "$.error", "Next": StateHostEnded},
				},
				"Next": StateFinish,
			},
			// The await task stores the state's task token on the build and returns; the state
			// then waits until the API, hearing the build end, sends SendTaskSuccess (complete)
			// or SendTaskFailure (failed, cancelled, superseded). The agent's heartbeats reach it
			// as SendTaskHeartbeat with the stored token.
			StateAwaitAgent: obj{
				"Type":     "Task",
				"Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
				"Parameters": obj{
					"FunctionName": "${" + PlaceholderTaskFunction + "}",
					"Payload": obj{
						"task": TaskAwait, "organizationId.$": "$.organizationId", "buildId.$": "$.buildId",
						"execution.$": "$$.Execution.Name", "taskToken.$": "$$.Task.Token",
					},
				},
				"TimeoutSeconds":   MaxExecutionSeconds,
				"HeartbeatSeconds": AgentHeartbeatSeconds,
				"Retry":            lambdaRetry, // the await task's invocation (storing the same token again is harmless)
				"ResultPath":       nil,
				"Catch":            []obj{{"ErrorEquals": []string{"States.ALL"}, "ResultPath": "$.error", "Next": StateHostEnded}},
				"Next":             StateFinish,
			},
			StateFinish:      finish,
			StateHostEnded:   hostEnded,
			StateUnsupported: unsupported,
			StateGiveUp: obj{
				"Type": "Fail", "Error": "kiln.TaskFailed",
				"Cause": "a task of the build's workflow failed; the execution-ended rule fails the build",
			},
			StateDone: obj{"Type": "Succeed"},
		},
	}
	out, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("sfn: marshal the definition: %v", err)) // static data: cannot happen
	}
	return string(out)
}
