package awsapp

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/kilnbuild/kiln/shared/agentapi"
)

// TaskHeartbeatSender is the Step Functions call SFNHeartbeats makes (*awssfn.Client).
type TaskHeartbeatSender interface {
	SendTaskHeartbeat(ctx context.Context, in *awssfn.SendTaskHeartbeatInput, optFns ...func(*awssfn.Options)) (*awssfn.SendTaskHeartbeatOutput, error)
}

// SFNHeartbeats passes the build hosts' heartbeats on to Step Functions: SendTaskHeartbeat
// with the task token of the RunOnCodeBuild state waiting for the host, which then does not
// time out (HeartbeatSeconds).
type SFNHeartbeats struct{ Client TaskHeartbeatSender }

// SendTaskHeartbeat implements agentapi.TaskHeartbeats.
func (h SFNHeartbeats) SendTaskHeartbeat(ctx context.Context, taskToken string) error {
	if _, err := h.Client.SendTaskHeartbeat(ctx, &awssfn.SendTaskHeartbeatInput{TaskToken: aws.String(taskToken)}); err != nil {
		return fmt.Errorf("SendTaskHeartbeat: %w", err)
	}
	return nil
}

// newTaskHeartbeats is the API's Step Functions heartbeats (the endpoint honours
// AWS_ENDPOINT_URL_SFN), nil when no state machine runs builds.
func newTaskHeartbeats(awsCfg aws.Config, cfg WorkflowConfig) agentapi.TaskHeartbeats {
	if cfg.StateMachineARN == "" {
		return nil
	}
	return SFNHeartbeats{Client: awssfn.NewFromConfig(awsCfg)}
}
