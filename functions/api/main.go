// Command api is the API Lambda: kiln's HTTP API behind API Gateway (HTTP API, payload 2.0).
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/kilnbuild/kiln/shared/app/awsapp"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := awsapp.LoadAWSConfig(os.Getenv)
	if err != nil {
		logger.Error("configuration", slog.String("error", err.Error()))
		os.Exit(1)
	}
	api, err := awsapp.NewAWSAPI(context.Background(), cfg, logger)
	if err != nil {
		logger.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(newHandler(api))
}

// newHandler adapts the API router to API Gateway HTTP API events.
func newHandler(api http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(api).ProxyWithContext
}
