package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// execution answers the status of the build's execution on kiln aws-local's Step Functions
// stand-in, once it ended when ended is set.
func (w *World) Execution(t *testing.T, buildID string, ended bool) string {
	t.Helper()
	client := awssfn.New(awssfn.Options{BaseEndpoint: aws.String(w.AWS.StepFunctionsEndpoint()), Region: awslocalapp.Region,
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
