// Command ended is the Lambda of the rule on build executions that ended FAILED, TIMED_OUT or
// ABORTED: it fails the build if it is still pending or running.
package main

import (
	"context"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/compose/awsapp"
)

func main() {
	awsapp.StartLambda(awsapp.LoadAWSConfig, func(ctx context.Context, cfg awsapp.AWSConfig, logger *slog.Logger) (any, error) {
		fns, err := awsapp.NewFunctions(ctx, cfg, logger)
		if err != nil {
			return nil, err
		}
		return fns.Ended.Handle, nil
	})
}
