package awslocalapp

import (
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/kilnbuild/kiln/shared/awscost"
	"github.com/kilnbuild/kiln/shared/awslocal/apigateway/websocket"
	"github.com/kilnbuild/kiln/shared/compose/awsapp"
	"github.com/kilnbuild/kiln/shared/live/connections"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// The WebSocket API of live build events, as aws-local names it: its id (what the template's
// Ref of the API resolves to) and its stage (the stack's LiveStage).
const (
	awsLocalLiveAPI = "kiln-live-local"
	liveStage       = "live"
)

// livePartsOf are a principal's live parts: the sockets' items in DynamoDB and the @connections
// API at endpoint, both signed with its key and checked against its role.
func (l *AWSLocal) livePartsOf(principal, endpoint string) awsapp.LiveParts {
	return awsapp.LiveParts{
		Registry: dynamostore.NewLiveRegistry(l.iam.dbOf(principal), l.backend.table),
		Sender:   connections.New(awsConfigOf(principal), endpoint),
	}
}

// liveGreeter invokes the live function asynchronously through the Lambda Invoke API, as the
// live function's role (its grant in the template decides).
func liveGreeter(lambdaURL string) awsapp.LambdaGreeter {
	return awsapp.LambdaGreeter{Function: "live",
		Client: awslambda.NewFromConfig(awsConfigOf("live"), func(o *awslambda.Options) { o.BaseEndpoint = aws.String(lambdaURL) })}
}

// startLiveAPI serves the WebSocket API's stage in front of the live function, metered as API
// Gateway bills a WebSocket API.
func (l *AWSLocal) startLiveAPI(fn *awsapp.LiveFunction, serve func(http.Handler)) error {
	g, err := websocket.New(l.iam.meter.fn("live", lambda.NewHandler(fn.Handle)),
		websocket.API{ID: awsLocalLiveAPI, Stage: liveStage, Region: Region, Account: awsLocalAccount}, l.iam.auth, l.logger)
	if err != nil {
		return err
	}
	g.Meter = func(u websocket.Usage) {
		l.iam.meter.Add("websocket", "execute-api:websocket", awscost.Usage{WebSocketMessages: u.Messages, WebSocketConnectionMinutes: u.ConnectionMinutes})
	}
	l.live = g
	serve(g)
	return nil
}

// withSocketPath serves /socket.io/ on the API's address from the WebSocket API, as the stack's
// CloudFront distribution does (its /socket.io/* behavior, the URI rewritten to the stage).
func (l *AWSLocal) withSocketPath(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.live == nil || !strings.HasPrefix(r.URL.Path, "/socket.io/") && r.URL.Path != "/socket.io" {
			api.ServeHTTP(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = "/"+liveStage, ""
		l.live.ServeHTTP(w, r2)
	})
}
