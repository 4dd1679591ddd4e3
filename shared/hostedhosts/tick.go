package hostedhosts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// DefaultIdleLimit is how long a host may stay in service without claiming a build, while no
// hosted build waits, before the schedule terminates it: long enough to take the next build of
// a burst (a host from the warm pool takes minutes to start), short enough that an idle
// 32-vCPU instance costs little.
const DefaultIdleLimit = 15 * time.Minute

// maxPendingScan bounds how much of the pending queue one tick reads.
const maxPendingScan = 10_000

// Hosts is the hosts' Auto Scaling group (Group).
type Hosts interface {
	Instances(ctx context.Context) ([]Instance, error)
	Terminate(ctx context.Context, instanceID string) error
}

// Metrics publishes the number of hosted builds waiting (CloudWatchMetrics).
type Metrics interface {
	PublishWaiting(ctx context.Context, waiting int) error
}

// Records is what a tick reads and writes in the store.
type Records interface {
	store.QueuePager
	GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error)
	SeeHostedHost(ctx context.Context, id string, now time.Time) (*kiln.HostedHost, error)
	ClaimHostedHost(ctx context.Context, h *kiln.HostedHost) error
}

// Reaper is the schedule's care of one hosted pool, one Tick a minute.
type Reaper struct {
	Store Records
	// Pool is the hosted pool (kiln.HostedPoolWin64, kiln.HostedPoolLinux) whose waiting builds
	// it counts; Hosts is that pool's group.
	Pool    string
	Hosts   Hosts
	Metrics Metrics
	// IdleLimit: DefaultIdleLimit when 0.
	IdleLimit time.Duration
	Logger    *slog.Logger
	Now       func() time.Time
}

// Tick publishes how many hosted builds wait (the group scales out on it), then terminates the
// hosts that are done: those whose build ended (or that claimed a build another host holds),
// and, while no build waits, those in service without a claim for longer than IdleLimit. An idle
// host is first retired in the store (its claim recorded as none), so that it cannot claim a
// build between the decision and its end. Each part runs whatever the others did.
func (r *Reaper) Tick(ctx context.Context) error {
	if r.Pool == "" {
		return errors.New("hosted hosts: the reaper names no pool")
	}
	now := kiln.Now(r.Now)
	waiting, err := r.waiting(ctx)
	if err != nil {
		return err // without the count, neither the metric nor the idle rule is sound
	}
	var errs []error
	if err := r.Metrics.PublishWaiting(ctx, waiting); err != nil {
		errs = append(errs, fmt.Errorf("publish the waiting builds of pool %s: %w", r.Pool, err))
	}
	instances, err := r.Hosts.Instances(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, in := range instances {
		if in.State != StateInService {
			continue
		}
		why, err := r.done(ctx, in.ID, waiting, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if why == "" {
			continue
		}
		if err := r.Hosts.Terminate(ctx, in.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		r.log().InfoContext(ctx, "terminated a hosted host", slog.String("pool", r.Pool), slog.String("instance_id", in.ID), slog.String("reason", why))
	}
	return errors.Join(errs...)
}

// waiting counts the pending builds of the hosted pool.
func (r *Reaper) waiting(ctx context.Context) (int, error) {
	pending, err := store.ReadQueue(ctx, r.Store, kiln.StatusPending, maxPendingScan)
	if err != nil {
		return 0, fmt.Errorf("read the pending builds: %w", err)
	}
	n := 0
	for _, b := range pending {
		if b.AgentPool == r.Pool {
			n++
		}
	}
	return n, nil
}

// done says why an instance in service should be terminated ("": it should not).
func (r *Reaper) done(ctx context.Context, id string, waiting int, now time.Time) (string, error) {
	h, err := r.Store.SeeHostedHost(ctx, id, now)
	if err != nil {
		return "", fmt.Errorf("record hosted host %s: %w", id, err)
	}
	if !h.Claimed() {
		if waiting > 0 || now.Sub(h.SeenAt) < r.idleLimit() {
			return "", nil
		}
		err := r.Store.ClaimHostedHost(ctx, &kiln.HostedHost{ID: id, SeenAt: now, ClaimedAt: &now})
		if kiln.IsCode(err, kiln.EConflict) {
			return "", nil // it claimed a build just now
		}
		if err != nil {
			return "", fmt.Errorf("retire hosted host %s: %w", id, err)
		}
		return "idle for " + now.Sub(h.SeenAt).Round(time.Second).String() + " with no build waiting", nil
	}
	if h.BuildID == "" {
		return "retired idle", nil // retired by an earlier tick whose termination failed
	}
	b, err := r.Store.GetBuild(ctx, h.OrganizationID, h.BuildID)
	switch {
	case kiln.IsCode(err, kiln.ENotFound):
		return "its build is gone", nil
	case err != nil:
		return "", fmt.Errorf("read the build of hosted host %s: %w", id, err)
	case b.Status.Terminal():
		return "its build ended " + string(b.Status), nil
	case b.Host != kiln.HostedHostPrefix+id:
		return "its build is held by another host", nil
	}
	return "", nil
}

func (r *Reaper) idleLimit() time.Duration {
	if r.IdleLimit > 0 {
		return r.IdleLimit
	}
	return DefaultIdleLimit
}

func (r *Reaper) log() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}
