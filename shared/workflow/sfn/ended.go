package sfn

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// EndedDetailType is the EventBridge detail type of an execution's status change.
const EndedDetailType = "Step Functions Execution Status Change"

// EndedDetail is the detail of a "Step Functions Execution Status Change" event (the fields
// kiln reads).
type EndedDetail struct {
	ExecutionARN    string `json:"executionArn"`
	StateMachineARN string `json:"stateMachineArn"`
	Name            string `json:"name"`
	Status          string `json:"status"`
	// Input is the execution's input, as a JSON string (ExecutionInput).
	Input string `json:"input"`
}

// Ended is the "ended" Lambda: when a build's execution ends FAILED, TIMED_OUT or ABORTED, the
// build, if still pending or running, fails. So a build never stays running after its
// execution ended, whatever failed on the way (a task Lambda that kept failing, an execution
// stopped by hand).
type Ended struct {
	Lifecycle *builds.Lifecycle
	Logger    *slog.Logger
	// Credentials: the build's host credential parameter, if any, is deleted (an execution
	// stopped or timed out ran no Finish task that would have).
	Credentials HostCredentialStore
}

// Handle handles one status change event; statuses other than the three are ignored.
func (e *Ended) Handle(ctx context.Context, ev events.CloudWatchEvent) error {
	if ev.DetailType != EndedDetailType {
		return fmt.Errorf("ended: event of type %q, want %q", ev.DetailType, EndedDetailType)
	}
	var d EndedDetail
	if err := json.Unmarshal(ev.Detail, &d); err != nil {
		return fmt.Errorf("ended: read the event's detail: %w", err)
	}
	switch d.Status {
	case "FAILED", "TIMED_OUT", "ABORTED":
	default:
		return nil
	}
	var in ExecutionInput
	if err := json.Unmarshal([]byte(d.Input), &in); err != nil || in.OrganizationID == "" || in.BuildID == "" {
		return fmt.Errorf("ended: execution %s: its input names no build", d.ExecutionARN)
	}
	if b, err := e.Lifecycle.Builds.GetBuild(ctx, in.OrganizationID, in.BuildID); err == nil {
		e.Credentials.remove(ctx, b, e.log())
	} else {
		e.log().WarnContext(ctx, "ended: read the build", slog.String("build_id", in.BuildID), slog.String("error", err.Error()))
	}
	reason := "the build's workflow ended " + d.Status + " before the build did"
	_, err := e.Lifecycle.Fail(ctx, in.OrganizationID, in.BuildID, reason)
	if kiln.IsCode(err, kiln.EInvalidState) {
		return nil // it ended first (completed, cancelled, superseded, failed by a task)
	}
	if err != nil {
		return fmt.Errorf("ended: fail build %s: %w", in.BuildID, err)
	}
	e.log().InfoContext(ctx, "build failed: its execution ended", slog.String("build_id", in.BuildID),
		slog.String("org_id", in.OrganizationID), slog.String("status", d.Status))
	return nil
}

func (e *Ended) log() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}
