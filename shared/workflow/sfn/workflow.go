package sfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/codebuild"
	cbtypes "github.com/aws/aws-sdk-go-v2/service/codebuild/types"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Executions is the part of the Step Functions API the workflow uses.
type Executions interface {
	StartExecution(ctx context.Context, in *awssfn.StartExecutionInput, opts ...func(*awssfn.Options)) (*awssfn.StartExecutionOutput, error)
	StopExecution(ctx context.Context, in *awssfn.StopExecutionInput, opts ...func(*awssfn.Options)) (*awssfn.StopExecutionOutput, error)
}

// HostBuilds is the part of the CodeBuild API the workflow uses: looking at a build's host and
// stopping it.
type HostBuilds interface {
	BatchGetBuilds(ctx context.Context, in *codebuild.BatchGetBuildsInput, opts ...func(*codebuild.Options)) (*codebuild.BatchGetBuildsOutput, error)
	StopBuild(ctx context.Context, in *codebuild.StopBuildInput, opts ...func(*codebuild.Options)) (*codebuild.StopBuildOutput, error)
}

// HostPrefix starts the Host of a build whose host runs in CodeBuild, once the host reported its
// CodeBuild build id ("codebuild:<project>:<uuid>").
const HostPrefix = HostCodeBuild + ":"

// Workflow runs builds as executions of the build's state machine (builds.Workflow).
type Workflow struct {
	Executions Executions
	// Hosts stops CodeBuild builds; nil stops executions only.
	Hosts HostBuilds
	// StateMachineARN is the state machine every build runs on.
	StateMachineARN string
	Logger          *slog.Logger
}

// Start starts the build's execution, named after the build. An execution of that name already
// exists when a start is repeated: that is the build already started.
func (w *Workflow) Start(ctx context.Context, b *kiln.Build) error {
	input, err := json.Marshal(ExecutionInput{OrganizationID: b.OrganizationID, BuildID: b.ID})
	if err != nil {
		return fmt.Errorf("start build %s: %w", b.ID, err)
	}
	_, err = w.Executions.StartExecution(ctx, &awssfn.StartExecutionInput{
		StateMachineArn: aws.String(w.StateMachineARN), Name: aws.String(b.ID), Input: aws.String(string(input)),
	})
	var exists *sfntypes.ExecutionAlreadyExists
	if errors.As(err, &exists) {
		w.log().InfoContext(ctx, "build's execution already started", slog.String("build_id", b.ID))
		return nil
	}
	if err != nil {
		return fmt.Errorf("start build %s: start its execution: %w", b.ID, err)
	}
	return nil
}

// Stop stops the build's execution and, when its host reported a CodeBuild build, that build.
// Both are tried; an execution or build that already ended is not an error.
func (w *Workflow) Stop(ctx context.Context, b *kiln.Build) error {
	var errs []error
	arn, err := ExecutionARN(w.StateMachineARN, b.ID)
	if err == nil {
		_, err = w.Executions.StopExecution(ctx, &awssfn.StopExecutionInput{
			ExecutionArn: aws.String(arn), Error: aws.String("kiln.Stopped"), Cause: aws.String("the build was " + string(b.Status)),
		})
		var gone *sfntypes.ExecutionDoesNotExist
		if errors.As(err, &gone) {
			err = nil
		}
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("stop build %s: stop its execution: %w", b.ID, err))
	}
	if id, ok := strings.CutPrefix(b.Host, HostPrefix); ok && id != "" && w.Hosts != nil {
		if err := w.stopHost(ctx, b, id); err != nil {
			errs = append(errs, fmt.Errorf("stop build %s: stop its CodeBuild build %s: %w", b.ID, id, err))
		}
	}
	return errors.Join(errs...)
}

// stopHost stops the CodeBuild build id that the build's host reported as its own, once
// CodeBuild confirms it was started for this build: the id comes from the host, which runs the
// tenant's code, and must not let it stop another organization's host.
func (w *Workflow) stopHost(ctx context.Context, b *kiln.Build, id string) error {
	out, err := w.Hosts.BatchGetBuilds(ctx, &codebuild.BatchGetBuildsInput{Ids: []string{id}})
	if err != nil {
		return err
	}
	if len(out.Builds) != 1 || out.Builds[0].Environment == nil || !runsBuild(out.Builds[0].Environment.EnvironmentVariables, b.ID) {
		return fmt.Errorf("CodeBuild does not know it as a host of this build; not stopped")
	}
	_, err = w.Hosts.StopBuild(ctx, &codebuild.StopBuildInput{Id: aws.String(id)})
	return err
}

// runsBuild reports whether a CodeBuild build's environment names the build as its own.
func runsBuild(env []cbtypes.EnvironmentVariable, buildID string) bool {
	for _, v := range env {
		if aws.ToString(v.Name) == agentapi.EnvBuildID {
			return aws.ToString(v.Value) == buildID
		}
	}
	return false
}

// ExecutionARN is the ARN of execution name of the state machine stateMachineARN
// (arn:aws:states:<region>:<account>:stateMachine:<machine> → …:execution:<machine>:<name>).
func ExecutionARN(stateMachineARN, name string) (string, error) {
	parts := strings.Split(stateMachineARN, ":")
	if len(parts) != 7 || parts[0] != "arn" || parts[2] != "states" || parts[5] != "stateMachine" || parts[6] == "" {
		return "", fmt.Errorf("%q is not a state machine ARN", stateMachineARN)
	}
	parts[5] = "execution"
	return strings.Join(parts, ":") + ":" + name, nil
}

func (w *Workflow) log() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.Default()
}
