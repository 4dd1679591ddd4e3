package builds

import (
	"context"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// AssignPool records, before its claim, the agent pool whose agents claim a pending build (the
// workflow puts a Win64 build without a pool into kiln's hosted Windows pool). Assigning the
// pool it already has is a repeat; a build no longer pending is invalid_state, with the build as
// read, so that the caller can tell an ended build.
func (l *Lifecycle) AssignPool(ctx context.Context, orgID, id, pool string) (*kiln.Build, error) {
	b, _, _, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusPending}, to: kiln.StatusPending,
		edit:   func(b *kiln.Build) { b.AgentPool = pool },
		repeat: func(b *kiln.Build) bool { return b.AgentPool == pool && !b.Status.Terminal() },
	})
	return b, err
}

// StoreTaskToken stores the workflow's task token on a build an agent runs (pending or
// running), so that the write ending the build carries it to whoever answers it. Storing the
// token it has is a repeat; an ended build is invalid_state, with the build as read.
func (l *Lifecycle) StoreTaskToken(ctx context.Context, orgID, id, token string) (*kiln.Build, error) {
	b, _, _, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusPending, kiln.StatusRunning}, keep: true,
		edit:   func(b *kiln.Build) { b.TaskToken = token },
		repeat: func(b *kiln.Build) bool { return b.TaskToken == token },
	})
	return b, err
}

// ResetDelivery puts a complete build's auto deploy back to pending, its attempts and error
// cleared (a redeploy). A build that is not complete is invalid_state.
func (l *Lifecycle) ResetDelivery(ctx context.Context, orgID, id string) (*kiln.Build, error) {
	b, _, _, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusComplete}, to: kiln.StatusComplete,
		edit: func(b *kiln.Build) {
			b.AutoDeployStatus, b.AutoDeployError, b.AutoDeployAttempts, b.AutoDeployNextAt = kiln.AutoDeployPending, "", 0, time.Time{}
		},
	})
	return b, err
}
