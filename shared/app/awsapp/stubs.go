package awsapp

import (
	"context"
	"io"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// The AWS deployment serves the API, but builds run only on one machine until the Step Functions
// workflow, the build hosts and the S3 artifact store arrive (the AWS deployment issue). Until
// then a trigger in AWS fails its build with this reason, and there are no artifacts.

// awsWorkflow refuses to start builds.
type awsWorkflow struct{}

func (awsWorkflow) Start(ctx context.Context, b *kiln.Build) error {
	return kiln.Errorf(kiln.EInternal, "builds do not run in the AWS deployment yet (the Step Functions workflow is not deployed)")
}

func (awsWorkflow) Stop(ctx context.Context, b *kiln.Build) error { return nil }

// noArtifacts is the artifact store of a deployment where no build has run.
type noArtifacts struct{}

func (noArtifacts) Put(ctx context.Context, key string, write func(io.Writer) error) error {
	return kiln.Errorf(kiln.EInternal, "the AWS deployment has no artifact store yet")
}

func (noArtifacts) Open(ctx context.Context, key string) (artifacts.Object, error) {
	return nil, kiln.NotFound("artifact")
}

func (noArtifacts) Delete(ctx context.Context, key string) error { return nil }
