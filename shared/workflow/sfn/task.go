package sfn

// Task names: the "task" field of the task Lambda's input.
const (
	// TaskClaim claims the build for a host and says where it runs (ClaimOutput).
	TaskClaim = "claim"
	// TaskFinish ends a build its host left running: with Error set, the host's run failed
	// (stopped, lost, timed out); without, the host ended without reporting a result.
	TaskFinish = "finish"
	// TaskUnsupported fails a build no host of this deployment can run, with Reason.
	TaskUnsupported = "unsupported"
	// TaskAwait stores TaskToken on a build an agent runs (WaitForAgent) and returns.
	TaskAwait = "await"
)

// TaskInput is the task Lambda's input, as the definition's Parameters build it.
type TaskInput struct {
	Task           string `json:"task"`
	OrganizationID string `json:"organizationId"`
	BuildID        string `json:"buildId"`
	// Execution is the execution's name (the build id).
	Execution string `json:"execution"`
	// Error is what a Catch caught (TaskFinish after a failed host run).
	Error *TaskError `json:"error,omitempty"`
	// Reason is why no host runs the build (TaskUnsupported).
	Reason string `json:"reason,omitempty"`
	// TaskToken is the WaitForAgent state's task token (TaskAwait).
	TaskToken string `json:"taskToken,omitempty"`
}

// TaskError is a caught error, as Step Functions puts it in ResultPath.
type TaskError struct {
	Error string `json:"Error"`
	Cause string `json:"Cause"`
}

// ClaimOutput is what the claim answers: where and how the build's host runs.
type ClaimOutput struct {
	// Kind is HostCodeBuild, HostAgent, HostBuildEnded, HostWait or HostUnsupported.
	Kind string `json:"kind"`
	// Reason says why the build cannot run here (HostUnsupported).
	Reason string `json:"reason,omitempty"`
	// WaitSeconds is how long the build waits before its next claim (HostWait; see SlotWait).
	WaitSeconds int `json:"waitSeconds,omitempty"`
	// Image is the build host's container image (the engine version's).
	Image string `json:"image,omitempty"`
	// TimeoutMinutes is CodeBuild's limit for the host (see HostTimeoutMinutes).
	TimeoutMinutes int `json:"timeoutMinutes,omitempty"`
	// HostURL, CredentialParameter and BuildID are the host's environment (KILN_HOST_URL,
	// KILN_HOST_CREDENTIAL, KILN_BUILD_ID), which RunOnCodeBuild passes to CodeBuild. The
	// credential itself is not here (this is the execution's data, which its history keeps):
	// CredentialParameter names the SecureString parameter holding it, which CodeBuild reads
	// with the project's role when the build starts (a PARAMETER_STORE variable).
	HostURL             string `json:"hostUrl,omitempty"`
	CredentialParameter string `json:"credentialParameter,omitempty"`
	BuildID             string `json:"buildId,omitempty"`
}

// ExecutionInput is an execution's input: the build it runs. The execution's name is the build id.
type ExecutionInput struct {
	OrganizationID string `json:"organizationId"`
	BuildID        string `json:"buildId"`
}
