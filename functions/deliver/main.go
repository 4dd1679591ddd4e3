// Command deliver is the deliver Lambda, fed by the delivery queue (SQS, batch size 1): one
// attempt of one auto deploy or org webhook delivery per message.
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
	cfg, err := awsapp.LoadBackgroundConfig(os.Getenv)
	if err != nil {
		logger.Error("configuration", slog.String("error", err.Error()))
		os.Exit(1)
	}
	d, err := awsapp.NewAWSDeliver(context.Background(), cfg, logger)
	if err != nil {
		logger.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(d.Handle)
}
