// Command task is the task Lambda of the builds' state machine: it claims a build for its
// CodeBuild host, and fails a build whose host ended without a result or that no host runs.
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
		return fns.Task.Handle, nil
	})
}
