// Command schedule is the schedule Lambda, invoked every minute by an EventBridge rule: scheduled
// builds, silent builds, the daily artifact retention, and the due deliveries sent to the
// delivery queue.
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
	s, err := awsapp.NewAWSSchedule(context.Background(), cfg, logger)
	if err != nil {
		logger.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(s.Handle)
}
