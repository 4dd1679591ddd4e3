// Command schedule is the schedule Lambda, invoked every minute by an EventBridge rule: scheduled
// builds, silent builds, the daily artifact retention, and the due deliveries sent to the
// delivery queue.
package main

import (
	"context"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/compose/awsapp"
)

func main() {
	awsapp.StartLambda(awsapp.LoadBackgroundConfig, func(ctx context.Context, cfg awsapp.BackgroundConfig, logger *slog.Logger) (any, error) {
		s, err := awsapp.NewAWSSchedule(ctx, cfg, logger)
		if err != nil {
			return nil, err
		}
		return s.Handle, nil
	})
}
