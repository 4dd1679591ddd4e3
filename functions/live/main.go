// Command live is the Lambda behind the WebSocket API of live build events: API Gateway invokes
// it for $connect, $disconnect and every message ($default), and it invokes itself
// asynchronously to greet a socket once its $connect has been answered.
package main

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/kilnbuild/kiln/shared/compose/awsapp"
)

func main() {
	awsapp.StartLambda(awsapp.LoadAWSConfig, func(ctx context.Context, cfg awsapp.AWSConfig, logger *slog.Logger) (any, error) {
		f, err := awsapp.NewAWSLive(ctx, cfg, lambdacontext.FunctionName, logger)
		if err != nil {
			return nil, err
		}
		return f.Handle, nil
	})
}
