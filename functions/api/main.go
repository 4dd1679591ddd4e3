// Command api is the API Lambda: kiln's HTTP API behind API Gateway (HTTP API, payload 2.0).
package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/kilnbuild/kiln/shared/compose/awsapp"
)

func main() {
	awsapp.StartLambda(awsapp.LoadAWSConfig, func(ctx context.Context, cfg awsapp.AWSConfig, logger *slog.Logger) (any, error) {
		api, err := awsapp.NewAWSAPI(ctx, cfg, logger)
		if err != nil {
			return nil, err
		}
		return newHandler(api), nil
	})
}

// newHandler adapts the API router to API Gateway HTTP API events.
func newHandler(api http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(api).ProxyWithContext
}
