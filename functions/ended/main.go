// Command ended is the Lambda of the rule on build executions that ended FAILED, TIMED_OUT or
// ABORTED: it fails the build if it is still pending or running.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/kilnbuild/kiln/shared/app/awsapp"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := awsapp.LoadAWSConfig(os.Getenv)
	if err != nil {
		logger.Error("configuration", slog.String("error", err.Error()))
		os.Exit(1)
	}
	fns, err := awsapp.NewFunctions(context.Background(), cfg, logger)
	if err != nil {
		logger.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(fns.Ended.Handle)
}
