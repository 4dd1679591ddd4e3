// Package agentpool is the service side of an organization's own build agents (`kiln agent`):
// their tokens, their revocation, and the claim by which an agent takes a pending build of its
// organization in its pool (see Dispatcher).
package agentpool

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// ReasonRevoked is why the builds an agent held fail when its token is revoked.
const ReasonRevoked = "the agent's token was revoked"

// Store is what the agents' service reads and writes.
type Store interface {
	GetAgentByHash(ctx context.Context, hash string) (*kiln.Agent, error)
	RevokeAgent(ctx context.Context, orgID, id string, at time.Time) (*kiln.Agent, error)
	TouchAgent(ctx context.Context, orgID, id string, at time.Time) error
	// QueuedBuildsAfter lists builds in a status across organizations, oldest first.
	QueuedBuildsAfter(ctx context.Context, status kiln.BuildStatus, afterID string, limit int) ([]*kiln.Build, error)
}

// Lifecycle changes builds (builds.Lifecycle).
type Lifecycle interface {
	ClaimHost(ctx context.Context, orgID, id, host, credentialHash string, startGrace time.Duration) (*kiln.Build, error)
	Fail(ctx context.Context, orgID, id, reason string) (*kiln.Build, error)
}

// maxRunningScan bounds how many running builds a revocation looks through.
const maxRunningScan = 10_000

// Revoke revokes the agent's token and fails the builds it holds: its host credentials stop
// working with them (their next call is refused), and nobody waits for a host that may no
// longer report.
func Revoke(ctx context.Context, st Store, lc Lifecycle, orgID, id string, now time.Time, logger *slog.Logger) (*kiln.Agent, error) {
	a, err := st.RevokeAgent(ctx, orgID, id, now)
	if err != nil {
		return nil, err
	}
	host := kiln.AgentHost(a.ID)
	running, err := store.ReadQueue(ctx, st, kiln.StatusRunning, maxRunningScan)
	if err != nil {
		return nil, fmt.Errorf("revoke agent %s: list running builds: %w", a.ID, err)
	}
	for _, b := range running {
		if b.OrganizationID != orgID || b.Host != host {
			continue
		}
		if _, err := lc.Fail(ctx, b.OrganizationID, b.ID, ReasonRevoked); err != nil && !kiln.IsCode(err, kiln.EInvalidState) {
			return nil, fmt.Errorf("revoke agent %s: fail build %s: %w", a.ID, b.ID, err)
		}
		logger.InfoContext(ctx, "failed the build of a revoked agent", slog.String("build_id", b.ID), slog.String("org_id", orgID))
	}
	return a, nil
}
