package awsapp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TaskTokenClient is the Step Functions calls SFNHeartbeats makes (*awssfn.Client).
type TaskTokenClient interface {
	SendTaskHeartbeat(ctx context.Context, in *awssfn.SendTaskHeartbeatInput, optFns ...func(*awssfn.Options)) (*awssfn.SendTaskHeartbeatOutput, error)
	SendTaskSuccess(ctx context.Context, in *awssfn.SendTaskSuccessInput, optFns ...func(*awssfn.Options)) (*awssfn.SendTaskSuccessOutput, error)
	SendTaskFailure(ctx context.Context, in *awssfn.SendTaskFailureInput, optFns ...func(*awssfn.Options)) (*awssfn.SendTaskFailureOutput, error)
}

// SFNHeartbeats passes the build hosts' heartbeats on to Step Functions: SendTaskHeartbeat
// with the task token of the state waiting for the host (RunOnCodeBuild, or WaitForAgent with
// the token stored on an agent's build), which then does not time out (HeartbeatSeconds). It
// also answers the WaitForAgent state when its build ends (BuildEnded).
type SFNHeartbeats struct {
	Client TaskTokenClient
	Logger *slog.Logger
}

var (
	_ agentapi.TaskHeartbeats = SFNHeartbeats{}
	_ builds.Ended            = SFNHeartbeats{}
)

// SendTaskHeartbeat implements agentapi.TaskHeartbeats.
func (h SFNHeartbeats) SendTaskHeartbeat(ctx context.Context, taskToken string) error {
	if _, err := h.Client.SendTaskHeartbeat(ctx, &awssfn.SendTaskHeartbeatInput{TaskToken: aws.String(taskToken)}); err != nil {
		return fmt.Errorf("SendTaskHeartbeat: %w", err)
	}
	return nil
}

// Errors a WaitForAgent state fails with (SendTaskFailure), by how its build ended; the cause
// is the build's failure reason. Its Catch sends every one to HostEnded, which finds the build
// ended.
const (
	TaskErrorFailed     = "kiln.BuildFailed"
	TaskErrorSuperseded = "kiln.BuildSuperseded"
)

// BuildEnded answers the task token of a build that has one (an agent's build): SendTaskSuccess
// when it completed, SendTaskFailure with why otherwise. A failed call is logged (without the
// token), never the build's failure: the state's HeartbeatSeconds ends the wait anyway.
func (h SFNHeartbeats) BuildEnded(ctx context.Context, b *kiln.Build) {
	if b.TaskToken == "" {
		return
	}
	var err error
	if b.Status == kiln.StatusComplete {
		_, err = h.Client.SendTaskSuccess(ctx, &awssfn.SendTaskSuccessInput{TaskToken: aws.String(b.TaskToken),
			Output: aws.String(`{"status":"complete"}`)})
	} else {
		code := TaskErrorFailed
		if b.Status == kiln.StatusSuperseded {
			code = TaskErrorSuperseded
		}
		cause := b.FailureReason
		if len(cause) > 32768 { // SendTaskFailure's limit
			cause = cause[:32768]
		}
		_, err = h.Client.SendTaskFailure(ctx, &awssfn.SendTaskFailureInput{TaskToken: aws.String(b.TaskToken),
			Error: aws.String(code), Cause: aws.String(cause)})
	}
	if err != nil {
		h.log().WarnContext(ctx, "answer the task token of a build that ended", slog.String("build_id", b.ID),
			slog.String("org_id", b.OrganizationID), slog.String("status", string(b.Status)),
			slog.String("error", strings.ReplaceAll(err.Error(), b.TaskToken, "[task token]")))
	}
}

func (h SFNHeartbeats) log() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// newTaskHeartbeats is the API's Step Functions heartbeats (the endpoint honours
// AWS_ENDPOINT_URL_SFN), nil when no state machine runs builds.
func newTaskHeartbeats(awsCfg aws.Config, cfg WorkflowConfig, logger *slog.Logger) agentapi.TaskHeartbeats {
	if cfg.StateMachineARN == "" {
		return nil
	}
	return SFNHeartbeats{Client: awssfn.NewFromConfig(awsCfg), Logger: logger}
}
