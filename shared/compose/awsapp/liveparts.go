package awsapp

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/compose/core"
	"github.com/kilnbuild/kiln/shared/live"
	"github.com/kilnbuild/kiln/shared/live/connections"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// LiveParts are how a function reaches the sockets of live build events: their registry in
// DynamoDB and the @connections API. The zero value reaches none.
type LiveParts struct {
	Registry live.Registry
	Sender   live.Sender
}

// newLiveParts are the live parts of a function in AWS: none without KILN_LIVE_ENDPOINT.
func newLiveParts(awsCfg aws.Config, db *dynamo.DB, cfg AWSConfig) LiveParts {
	if cfg.LiveEndpoint == "" {
		return LiveParts{}
	}
	return LiveParts{Registry: dynamostore.NewLiveRegistry(db, cfg.Table), Sender: connections.New(awsCfg, cfg.LiveEndpoint)}
}

// LambdaGreeter asks for a greeting by invoking the live function again, asynchronously.
type LambdaGreeter struct {
	Client   *lambda.Client
	Function string
}

// Greet invokes the function with a Greeting (InvocationType Event).
func (g LambdaGreeter) Greet(ctx context.Context, connID string) error {
	payload := fmt.Appendf(nil, `{"greet":%q}`, connID)
	_, err := g.Client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(g.Function), InvocationType: lambdatypes.InvocationTypeEvent, Payload: payload})
	if err != nil {
		return fmt.Errorf("invoke %s: %w", g.Function, err)
	}
	return nil
}

// NewLiveFunction builds the live function's handler from ready parts (kiln aws-local, and the
// Lambda through NewAWSLive).
func NewLiveFunction(cfg AWSConfig, p Parts, greeter Greeter) (*LiveFunction, error) {
	if p.Live.Registry == nil {
		return nil, fmt.Errorf("live function: KILN_LIVE_ENDPOINT is not set")
	}
	c, err := core.New(core.Parts{Store: p.Store, Logs: p.Logs, Logger: p.Logger, Now: p.Now,
		LiveRegistry: p.Live.Registry, LiveSender: p.Live.Sender}, cfg.coreSettings())
	if err != nil {
		return nil, err
	}
	svc, err := newLiveService(c)
	if err != nil {
		return nil, err
	}
	return &LiveFunction{Live: svc, Greeter: greeter, Logger: p.Logger}, nil
}

// NewAWSLive builds the live function's handler in AWS: the function greets a socket by
// invoking itself (its name from the Lambda environment).
func NewAWSLive(ctx context.Context, cfg AWSConfig, function string, logger *slog.Logger) (*LiveFunction, error) {
	awsCfg, _, err := connectWith(ctx, cfg, false) // sockets need no sealed secret
	if err != nil {
		return nil, err
	}
	db := dynamo.New(awsCfg)
	p := Parts{Store: dynamostore.New(db, cfg.Table), Logs: newLogs(db, cfg), Logger: logger, Live: newLiveParts(awsCfg, db, cfg)}
	return NewLiveFunction(cfg, p, LambdaGreeter{Client: lambda.NewFromConfig(awsCfg), Function: function})
}

// HostLogs is the log writer of the API function's host API, on ready parts: the lines hosts
// append are stored, their stages noted, and sent to the sockets watching the build (kiln
// aws-local's benchmarks write through it as a host's appends do).
func HostLogs(cfg AWSConfig, p Parts) (builds.LogWriter, error) {
	c, err := core.New(core.Parts{Store: p.Store, Logs: p.Logs, Logger: p.Logger, Now: p.Now,
		LiveRegistry: p.Live.Registry, LiveSender: p.Live.Sender}, cfg.coreSettings())
	if err != nil {
		return nil, err
	}
	return c.RunnerLogs(p.Logs), nil
}
