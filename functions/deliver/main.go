// Command deliver is the deliver Lambda, fed by the delivery queue (SQS, batch size 1): one
// attempt of one auto deploy or org webhook delivery per message.
package main

import (
	"context"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/compose/awsapp"
)

func main() {
	awsapp.StartLambda(awsapp.LoadBackgroundConfig, func(ctx context.Context, cfg awsapp.BackgroundConfig, logger *slog.Logger) (any, error) {
		d, err := awsapp.NewAWSDeliver(ctx, cfg, logger)
		if err != nil {
			return nil, err
		}
		return d.Handle, nil
	})
}
