package sfn

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/codebuild"
	cbtypes "github.com/aws/aws-sdk-go-v2/service/codebuild/types"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// fakeHosts is CodeBuild with builds whose KILN_BUILD_ID is known, recording the stops.
type fakeHosts struct {
	runs    map[string]string // CodeBuild build id → the kiln build it was started for
	stopped []string
}

func (f *fakeHosts) BatchGetBuilds(_ context.Context, in *codebuild.BatchGetBuildsInput, _ ...func(*codebuild.Options)) (*codebuild.BatchGetBuildsOutput, error) {
	out := &codebuild.BatchGetBuildsOutput{}
	for _, id := range in.Ids {
		if b, ok := f.runs[id]; ok {
			out.Builds = append(out.Builds, cbtypes.Build{Id: aws.String(id), Environment: &cbtypes.ProjectEnvironment{
				EnvironmentVariables: []cbtypes.EnvironmentVariable{{Name: aws.String(agentapi.EnvBuildID), Value: aws.String(b)}}}})
		}
	}
	return out, nil
}

func (f *fakeHosts) StopBuild(_ context.Context, in *codebuild.StopBuildInput, _ ...func(*codebuild.Options)) (*codebuild.StopBuildOutput, error) {
	f.stopped = append(f.stopped, aws.ToString(in.Id))
	return &codebuild.StopBuildOutput{}, nil
}

type fakeExecutions struct{}

func (fakeExecutions) StartExecution(context.Context, *awssfn.StartExecutionInput, ...func(*awssfn.Options)) (*awssfn.StartExecutionOutput, error) {
	return &awssfn.StartExecutionOutput{}, nil
}

func (fakeExecutions) StopExecution(context.Context, *awssfn.StopExecutionInput, ...func(*awssfn.Options)) (*awssfn.StopExecutionOutput, error) {
	return &awssfn.StopExecutionOutput{}, nil
}

// TestStopStopsOnlyTheBuildsOwnHost: the CodeBuild id a host reported is stopped only when
// CodeBuild says that build was started for this kiln build; a host that reported another
// organization's CodeBuild build as its own does not get it stopped.
func TestStopStopsOnlyTheBuildsOwnHost(t *testing.T) {
	tests := []struct {
		name, host string
		wantStop   bool
	}{
		{"its own host", HostPrefix + "kiln-hosts:own", true},
		{"another build's host", HostPrefix + "kiln-hosts:theirs", false},
		{"an unknown id", HostPrefix + "kiln-hosts:nobody", false},
		{"not yet reported", HostCodeBuild, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hosts := &fakeHosts{runs: map[string]string{"kiln-hosts:own": "b1", "kiln-hosts:theirs": "b2"}}
			w := &Workflow{Executions: fakeExecutions{}, Hosts: hosts, StateMachineARN: "arn:aws:states:us-east-1:1:stateMachine:kiln"}
			err := w.Stop(context.Background(), &kiln.Build{ID: "b1", OrganizationID: "o1", Status: kiln.StatusFailed, Host: tt.host})
			if stopped := len(hosts.stopped) == 1; stopped != tt.wantStop {
				t.Fatalf("stopped %v (err %v), want a stop: %v", hosts.stopped, err, tt.wantStop)
			}
			if !tt.wantStop && tt.host != HostCodeBuild && err == nil {
				t.Fatal("a refused stop reported no error")
			}
		})
	}
}
