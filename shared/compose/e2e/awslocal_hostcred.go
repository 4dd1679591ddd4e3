package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// checkCredentialKeptOutOfTheExecution: after a Linux build on kiln aws-local, its execution's
// input, output and history (as the Step Functions stand-in answers DescribeExecution and
// GetExecutionHistory) hold no host credential (every one starts "kbh."), RunOnCodeBuild passed
// KILN_HOST_CREDENTIAL as a PARAMETER_STORE variable naming the build's parameter, and once the
// execution ended that parameter is gone.
func (w *World) CheckCredentialKeptOutOfTheExecution(t *testing.T, buildID string) {
	t.Helper()
	if status := w.Execution(t, buildID, true); status != "SUCCEEDED" {
		t.Fatalf("execution ended %s", status)
	}
	client := awssfn.New(awssfn.Options{BaseEndpoint: aws.String(w.AWS.StepFunctionsEndpoint()), Region: awslocalapp.Region,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	arn, err := sfn.ExecutionARN(awslocalapp.StateMachineARN, buildID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	desc, err := client.DescribeExecution(ctx, &awssfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := client.GetExecutionHistory(ctx, &awssfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := json.Marshal([]any{desc, hist.Events})
	if strings.Contains(string(all), "kbh.") {
		t.Errorf("the execution's data holds a host credential:\n%s", all)
	}
	var param string
	for _, ev := range hist.Events {
		if ev.TaskScheduledEventDetails == nil || aws.ToString(ev.TaskScheduledEventDetails.ResourceType) != "codebuild" {
			continue
		}
		var in struct {
			EnvironmentVariablesOverride []struct{ Name, Value, Type string }
		}
		if err := json.Unmarshal([]byte(aws.ToString(ev.TaskScheduledEventDetails.Parameters)), &in); err != nil {
			t.Fatal(err)
		}
		for _, v := range in.EnvironmentVariablesOverride {
			if v.Name == agentapi.EnvHostCredential && v.Type == "PARAMETER_STORE" {
				param = v.Value
			}
		}
	}
	if !strings.HasPrefix(param, awslocalapp.HostCredentialPath+"/"+buildID+"/") {
		t.Fatalf("RunOnCodeBuild passed %s as %q, want a PARAMETER_STORE variable naming the build's parameter; history:\n%s", agentapi.EnvHostCredential, param, all)
	}
	if names := w.AWS.HostCredentialParameters(); len(names) != 0 {
		t.Errorf("after the build the parameter store holds %v, want none", names)
	}
}

// waitParametersGone waits until the parameter store holds nothing (the build's end deletes).
func (w *World) WaitParametersGone(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(w.AWS.HostCredentialParameters()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the parameter store still holds %v", w.AWS.HostCredentialParameters())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
