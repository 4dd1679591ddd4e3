package awsapp

import (
	"context"
	"io"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// A deployment configured without a state machine (KILN_STATE_MACHINE_ARN unset) or without an
// artifact bucket (KILN_ARTIFACTS unset) serves the API but cannot run builds: a trigger fails its
// build with the reason below, naming the missing setting, and there are no artifacts.

// awsWorkflow refuses to start builds.
type awsWorkflow struct{}

func (awsWorkflow) Start(ctx context.Context, b *kiln.Build) error {
	return kiln.Errorf(kiln.EInternal, "builds cannot run: this deployment has no build workflow (KILN_STATE_MACHINE_ARN is not set)")
}

func (awsWorkflow) Stop(ctx context.Context, b *kiln.Build) error { return nil }

// noArtifacts is the artifact store of a deployment where no build has run.
type noArtifacts struct{}

func (noArtifacts) Put(ctx context.Context, key string, write func(io.Writer) error) error {
	return kiln.Errorf(kiln.EInternal, "this deployment has no artifact store (KILN_ARTIFACTS is not set)")
}

func (noArtifacts) Open(ctx context.Context, key string) (artifacts.Object, error) {
	return nil, kiln.NotFound("artifact")
}

func (noArtifacts) Delete(ctx context.Context, key string) error { return nil }
