package e2e

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// awsLocalLambdaClient is the AWS SDK's Lambda client pointed at kiln aws-local's Invoke API, as
// `aws lambda invoke --endpoint-url` is.
func AWSLocalLambdaClient(ts *Server) *awslambda.Client {
	return awslambda.New(awslambda.Options{Region: awslocalapp.Region, BaseEndpoint: aws.String(ts.AWS.LambdaURL()),
		Credentials: credentials.NewStaticCredentialsProvider("aws-local", "aws-local", "")})
}

// bootstrapOrgOnAWSLocal makes another organization as an operator does on AWS: the admin
// function's forced bootstrap, through the Lambda Invoke API.
func bootstrapOrgOnAWSLocal(t testing.TB, ts *Server, name string) Tenant {
	t.Helper()
	payload, err := json.Marshal(map[string]any{"command": "bootstrap", "force": true, "organization": name,
		"email": "owner@" + kiln.Slugify(name) + ".example", "name": "Owner"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := AWSLocalLambdaClient(ts).Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("admin"), Payload: payload})
	if err != nil || out.StatusCode != 200 || out.FunctionError != nil {
		t.Fatalf("bootstrap %s through the admin function: %v %+v", name, err, out)
	}
	var created map[string]string
	if err := json.Unmarshal(out.Payload, &created); err != nil || created["organizationId"] == "" || created["token"] == "" {
		t.Fatalf("the admin function answered %s (%v)", out.Payload, err)
	}
	return Tenant{OrgID: created["organizationId"], Token: created["token"]}
}
