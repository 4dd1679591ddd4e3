package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/kilnbuild/kiln/shared/settings"
)

// LiveStage is the WebSocket API's stage: its @connections endpoint (KILN_LIVE_ENDPOINT) is
// https://<api id>.execute-api.<region>.amazonaws.com/live, and the distribution sends
// /socket.io/* to it (distribution.go).
const LiveStage = "live"

// liveRoutes are the WebSocket API's routes, each integrated with the live function: API
// Gateway routes every message to $default (kiln's Socket.IO packets match no route key).
var liveRoutes = []string{"$connect", "$disconnect", "$default"}

// livePosters are the functions that post build events to the sockets: the API (log lines the
// hosts append, cancels, a revoked token's or removed member's sockets closed), and the
// lifecycle's task, ended and schedule functions (status changes; the schedule's tick also pings
// the sockets inside API Gateway's 10-minute idle timeout, docs/deploy.md).
var livePosters = []string{"api", "task", "ended", "schedule"}

// createLiveAPI defines the WebSocket API of live build events and its stage, deployed with
// every change; its routes come with the live function (createLiveFunction).
func (s *KilnStack) createLiveAPI() {
	s.liveAPI = awsapigatewayv2.NewWebSocketApi(s.Stack, jsii.String("LiveAPI"), &awsapigatewayv2.WebSocketApiProps{
		ApiName:     jsii.String("kiln-live"),
		Description: jsii.String("kiln live build events: Socket.IO over WebSockets"),
	})
	stage := awsapigatewayv2.NewWebSocketStage(s.Stack, jsii.String("LiveStage"), &awsapigatewayv2.WebSocketStageProps{
		WebSocketApi: s.liveAPI,
		StageName:    jsii.String(LiveStage),
		AutoDeploy:   jsii.Bool(true),
	})
	cdknag.NagSuppressions_AddResourceSuppressions(stage, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-APIG1"),
		Reason: jsii.String("access logs of a WebSocket stage need the account-wide API Gateway CloudWatch role (AWS::ApiGateway::Account), which a stack should not take over; " +
			"the live function logs every connect, message and disconnect itself"),
	}}, jsii.Bool(true))
}

// liveEndpoint is KILN_LIVE_ENDPOINT: the stage's @connections endpoint.
func (s *KilnStack) liveEndpoint() *string {
	return awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("https://"), s.liveAPI.ApiId(), jsii.String(".execute-api."),
		awscdk.Aws_REGION(), jsii.String("."), awscdk.Aws_URL_SUFFIX(), jsii.String("/" + LiveStage)})
}

// connectionsArn is the ARN of the stage's @connections API for one HTTP method (POST
// PostToConnection, GET GetConnection, DELETE DeleteConnection), as AWS's "Control access to
// WebSocket APIs with IAM authorization" writes it, for every connection.
func (s *KilnStack) connectionsArn(method string) *string {
	return awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":execute-api:"),
		awscdk.Aws_REGION(), jsii.String(":"), awscdk.Aws_ACCOUNT_ID(), jsii.String(":"), s.liveAPI.ApiId(),
		jsii.String("/" + LiveStage + "/" + method + "/@connections/*")})
}

// allowLive lets a function post to, describe and close the stage's connections, and tells it
// the endpoint.
func (s *KilnStack) allowLive(f *function) {
	f.allow([]string{"execute-api:ManageConnections"}, s.connectionsArn("POST"), s.connectionsArn("GET"), s.connectionsArn("DELETE"))
	f.fn.AddEnvironment(jsii.String(settings.LiveEndpoint.Name), s.liveEndpoint(), nil)
}

// createLiveFunction defines the live function (functions/live) behind the WebSocket API's
// routes: Socket.IO's handshake, CONNECT with a token, joins and leaves, in connection and room
// items of the table (which expire by its ttl attribute).
//
// It may: read and write the table; read the master key (resolving API tokens and console
// sessions, as the API function does); manage the stage's connections. The functions that post
// build events get the same connections grant and the endpoint (livePosters).
func (s *KilnStack) createLiveFunction() {
	f := s.newFunction(functionSpec{
		name: "live", description: "kiln live build events (WebSocket API routes)", memoryMB: 256,
		// A WebSocket API gives up on an integration after 29 seconds.
		timeout: awscdk.Duration_Seconds(jsii.Number(29)),
	})
	s.table.GrantReadWriteData(f.role)
	s.masterKey.GrantRead(f.role, nil)
	s.allowLive(f)
	// The function greets a socket (Engine.IO's open packet) by invoking itself asynchronously
	// once $connect has answered: nothing can be posted to a connection during its $connect. The
	// grant is a policy of its own: in the role's default policy, which the function depends on,
	// the function's own ARN would be a circular dependency.
	awsiam.NewPolicy(s.Stack, jsii.String("LiveSelfInvokePolicy"), &awsiam.PolicyProps{
		Roles: &[]awsiam.IRole{f.role},
		Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("lambda:InvokeFunction"), Resources: &[]*string{f.fn.FunctionArn()},
		})},
	})
	for _, key := range liveRoutes {
		// One integration, and invoke permission, per route.
		id := map[string]string{"$connect": "Connect", "$disconnect": "Disconnect", "$default": "Default"}[key]
		s.liveAPI.AddRoute(jsii.String(key), &awsapigatewayv2.WebSocketRouteOptions{
			Integration: awsapigatewayv2integrations.NewWebSocketLambdaIntegration(jsii.String("Live"+id+"Integration"), f.fn, nil),
		})
	}
	for _, name := range livePosters {
		s.allowLive(s.functions[name])
	}
}
