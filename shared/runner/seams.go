package runner

import (
	"context"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Lifecycle is what the runner changes of the build it runs. In-process it is the service's
// builds.Lifecycle (LocalLifecycle); on a remote build host it is the service's host API.
type Lifecycle interface {
	// Progress records what the running build learnt on the way (the commit it checked out);
	// invalid_state once the build ended.
	Progress(ctx context.Context, orgID, id string, edit func(b *kiln.Build)) (*kiln.Build, error)
	// Complete records the build's artifact (already stored) and completes it; invalid_state
	// when the build ended otherwise first.
	Complete(ctx context.Context, a *kiln.Artifact) (*kiln.Build, error)
	// Fail ends the build's log with why and fails the build with reason; invalid_state when it
	// ended otherwise first.
	Fail(ctx context.Context, orgID, id, reason string) (*kiln.Build, error)
}

// Sources gives the runner the source a build checks out, with its credentials. An error that
// the customer should see is a *buildsteps.Failure: its Reason becomes the build's
// failureReason.
type Sources interface {
	Git(ctx context.Context, b *kiln.Build, p *kiln.Project) (*buildsteps.GitSource, error)
	Perforce(ctx context.Context, b *kiln.Build, p *kiln.Project) (*buildsteps.PerforceSource, error)
}

// LocalLifecycle is the runner's Lifecycle in the service's own process.
type LocalLifecycle struct {
	*builds.Lifecycle
	Logs LogWriter
}

var _ Lifecycle = LocalLifecycle{}

// Fail writes the build's last log line (the runner has written everything else), then fails it.
func (l LocalLifecycle) Fail(ctx context.Context, orgID, id, reason string) (*kiln.Build, error) {
	b, err := l.Builds.GetBuild(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if b.Status == kiln.StatusRunning {
		// The line goes first, so that a reader who sees the build ended has its whole log.
		ending := *b
		ending.Status, ending.FailureReason = kiln.StatusFailed, reason
		builds.WriteEndLine(ctx, l.Logs, &ending, kiln.Now(l.Now), l.Logger)
	}
	return l.Lifecycle.Fail(ctx, orgID, id, reason)
}
