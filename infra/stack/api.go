package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
)

// createHTTPAPI defines the HTTP API; its one route comes with the API function (which needs the
// API's endpoint as KILN_PUBLIC_URL first).
func (s *KilnStack) createHTTPAPI() {
	s.httpAPI = awsapigatewayv2.NewHttpApi(s.Stack, jsii.String("HttpAPI"), &awsapigatewayv2.HttpApiProps{
		ApiName:     jsii.String("kiln"),
		Description: jsii.String("kiln build service API"),
	})
	// Access logs of the default stage, kept a month: who called what and how it ended. No
	// header, query or body is logged (they carry tokens and credentials).
	logs := awslogs.NewLogGroup(s.Stack, jsii.String("HttpAPIAccessLogs"), &awslogs.LogGroupProps{
		Retention: awslogs.RetentionDays_ONE_MONTH,
	})
	stage := s.httpAPI.DefaultStage().Node().DefaultChild().(awsapigatewayv2.CfnStage)
	stage.SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: logs.LogGroupArn(),
		Format:         jsii.String(HTTPAPIAccessLogFormat),
	})
}

// HTTPAPIAccessLogFormat is the HTTP API's access log line: one JSON object per request.
const HTTPAPIAccessLogFormat = `{"requestId":"$context.requestId","ip":"$context.identity.sourceIp",` +
	`"requestTime":"$context.requestTime","method":"$context.httpMethod","routeKey":"$context.routeKey",` +
	`"status":"$context.status","protocol":"$context.protocol","responseLength":"$context.responseLength",` +
	`"integrationLatency":"$context.integrationLatency"}`

// createAPIFunction defines the API Lambda (functions/api): the kiln HTTP API, the webhook
// receivers and the build hosts' endpoints, behind the $default route (payload format 2.0).
//
// It may: read and write the table; read the master key and the GitHub App secret; start the
// build's execution and stop it (cancel, supersede), pass its host's heartbeats on
// (SendTaskHeartbeat), answer an agent's build's task token when it ends (SendTaskSuccess,
// SendTaskFailure) and stop its CodeBuild build; presign the
// artifact's upload (multipart parts) and download URLs, and delete artifacts, under the
// artifacts prefix — a presigned URL acts with the signer's rights, so the KMS rights the upload
// and download need are the API's, never the host's; enqueue deliveries.
func (s *KilnStack) createAPIFunction() {
	f := s.newFunction(functionSpec{
		name: "api", description: "kiln API", memoryMB: 512,
		// API Gateway gives up on an integration after 30 seconds.
		timeout: awscdk.Duration_Seconds(jsii.Number(29)),
	})
	s.table.GrantReadWriteData(f.role)
	s.masterKey.GrantRead(f.role, nil)
	s.githubApp.GrantRead(f.role, nil)
	f.allow([]string{"states:StartExecution"}, s.workflow.StateMachineArn())
	f.allow([]string{"states:StopExecution"}, s.executionsArn())
	// The hosts' heartbeats, passed on with the RunOnCodeBuild (or WaitForAgent) state's task
	// token, and an agent's build's end, answering WaitForAgent's token. The token names the
	// task, not the request: IAM has no resource type for SendTaskHeartbeat, SendTaskSuccess or
	// SendTaskFailure, so the only form is "*" (TestNoWildcards allowlists them).
	f.allow([]string{"states:SendTaskHeartbeat", "states:SendTaskSuccess", "states:SendTaskFailure"}, jsii.String("*"))
	// BatchGetBuilds first: a CodeBuild build is stopped only once it is known to host that build.
	f.allow([]string{"codebuild:BatchGetBuilds", "codebuild:StopBuild"}, s.hostProject.ProjectArn())
	f.allow([]string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"}, s.artifactObjectsArn())
	// Listing under the artifacts prefix (allowArtifactListings): the build caches (objects under
	// <artifacts>/caches/, covered above), whose newest of a key the host API finds, older ones
	// it replaces and an organization's oldest it evicts by listing; and a missing artifact's 404.
	s.allowArtifactsKey(f, "kms:Decrypt", "kms:GenerateDataKey")
	s.queue.GrantSendMessages(f.role)
	s.allowHostGroupsClaims(f)

	integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("APIIntegration"), f.fn,
		&awsapigatewayv2integrations.HttpLambdaIntegrationProps{
			PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
		})
	awsapigatewayv2.NewHttpRoute(s.Stack, jsii.String("DefaultRoute"), &awsapigatewayv2.HttpRouteProps{
		HttpApi:     s.httpAPI,
		RouteKey:    awsapigatewayv2.HttpRouteKey_DEFAULT(),
		Integration: integration,
	})
}

// allow adds a statement granting actions on resources to the function's role.
func (f *function) allow(actions []string, resources ...*string) {
	f.role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(actions...),
		Resources: &resources,
	}))
}

// CachesPrefix is where the build caches are kept below the artifacts prefix (package
// buildcache's keys start with it).
const CachesPrefix = "caches/"

// artifactReaders are the functions that read artifacts (s3:GetObject under the artifacts
// prefix): the API (downloads, the caches) and deliver (the artifact it sends).
var artifactReaders = []string{"api", "deliver"}

// allowArtifactListings lets each of artifactReaders list the bucket under the artifacts prefix.
// S3 answers a read of a key that does not exist with 404 NoSuchKey only to a caller that may
// s3:ListBucket the bucket (with the key as s3:prefix), and with 403 AccessDenied to any other
// ("If you don't have the s3:ListBucket permission, Amazon S3 returns an HTTP status code 403",
// the Permissions of GetObject and HeadObject in the Amazon S3 API Reference): without it an
// artifact deleted behind its record (the lifecycle rule's backstop, an operator) is an internal
// error instead of the API's 404 not_found, and a delivery's "the artifact is gone". Run once
// every function exists.
func (s *KilnStack) allowArtifactListings() {
	for _, name := range artifactReaders {
		s.allowListing(s.functions[name], ArtifactsPrefix+"/")
	}
}

// allowListing grants listing the bucket's keys under prefix only (s3:prefix).
func (s *KilnStack) allowListing(f *function, prefix string) {
	f.role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings("s3:ListBucket"),
		Resources:  &[]*string{s.bucket.BucketArn()},
		Conditions: &map[string]any{"StringLike": map[string]any{"s3:prefix": prefix + "*"}},
	}))
}

// allowArtifactsKey grants KMS actions on the stack's key for S3's use only (kms:ViaService):
// reading (Decrypt) and writing (GenerateDataKey, and Decrypt for multipart uploads) SSE-KMS
// objects.
func (s *KilnStack) allowArtifactsKey(f *function, actions ...string) {
	f.role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(actions...),
		Resources: &[]*string{s.key.KeyArn()},
		Conditions: &map[string]any{
			"StringEquals": map[string]any{
				"kms:ViaService": awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("s3."), s.Region(), jsii.String(".amazonaws.com")}),
			},
		},
	}))
}
