package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/kilnbuild/kiln/shared/app/awslocalapp"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// awsLocalAgentBuild (under TestOnAWSLocal): a build for an agent pool waits in its execution's
// WaitForAgent state; an agent (`kiln agent` in-process) claims it through the API Gateway
// stand-in and the API Lambda, runs it through the host API and completes it; the API answers
// the state's task token (SendTaskSuccess), so the execution ends SUCCEEDED, and the token never
// shows in the API.
func awsLocalAgentBuild(t *testing.T) {
	w := newWorld(t)
	if w.aws == nil {
		t.Skip("runs under TestOnAWSLocal only")
	}
	project := w.addShooter(t)
	_, secret := createAgent(t, w.testService, w.token, w.orgID, "studio box", "win")
	id := triggerAs(t, w, w.token, project, poolSetting(t, w, w.token, project, "win", "Shipping"))
	if got := w.execution(t, id, false); got != "RUNNING" {
		t.Fatalf("the execution of a build no agent claimed yet is %s, want RUNNING", got)
	}
	agent := startAgent(t, w, secret)
	b := waitAs(t, w, w.token, id, ended)
	if b["status"] != "complete" || !agent.ran(id) {
		t.Fatalf("build: %v (the agent claimed %v)\n%s", b, agent.claimed(), w.logText(t, id))
	}
	if got := w.execution(t, id, true); got != "SUCCEEDED" {
		t.Errorf("the execution of the agent's build ended %s, want SUCCEEDED", got)
	}
	for key := range w.do(t, "GET", "/builds/"+id, w.token, nil).Body {
		if strings.Contains(strings.ToLower(key), "token") {
			t.Errorf("the build's JSON has a field %q", key)
		}
	}
}

// execution answers the status of the build's execution on kiln aws-local's Step Functions
// stand-in, once it ended when ended is set.
func (w *world) execution(t *testing.T, buildID string, ended bool) string {
	t.Helper()
	client := awssfn.New(awssfn.Options{BaseEndpoint: aws.String(w.aws.StepFunctionsEndpoint()), Region: awslocalapp.Region,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	arn, err := sfn.ExecutionARN(awslocalapp.StateMachineARN, buildID)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := client.DescribeExecution(context.Background(), &awssfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		if !ended || out.Status != "RUNNING" {
			return string(out.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s still running", buildID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
