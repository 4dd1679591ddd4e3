package awsapp

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

// StartLambda is the main of each of kiln's Lambdas: it reads the configuration from the
// environment with load, builds the handler with build, and serves it. A failure of either is
// logged as JSON and ends the process, which Lambda reports as an init error.
func StartLambda[C any](load func(getenv func(string) string) (C, error), build func(ctx context.Context, cfg C, logger *slog.Logger) (handler any, err error)) {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := load(os.Getenv)
	if err != nil {
		logger.Error("configuration", slog.String("error", err.Error()))
		os.Exit(1)
	}
	handler, err := build(context.Background(), cfg, logger)
	if err != nil {
		logger.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(handler)
}
