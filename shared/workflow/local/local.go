// Package local runs builds on this machine: the store's pending builds are the queue (durable
// across restarts), taken by KILN_WORKERS workers fairly across organizations (in turns, each
// organization's oldest first, at most OrgLimit of one organization at once; see pick). A build a
// crash left running is
// failed as interrupted at the next start; a running build whose host stops reporting for 30 s
// is failed.
package local

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/wake"
)

// Runner runs one claimed build to its end.
type Runner interface {
	Run(ctx context.Context, b *kiln.Build) error
}

// Queue lists builds in a status across organizations, oldest first: the store's work queue.
type Queue interface {
	QueuedBuilds(ctx context.Context, status kiln.BuildStatus, limit int) ([]*kiln.Build, error)
	QueuedBuildsAfter(ctx context.Context, status kiln.BuildStatus, afterID string, limit int) ([]*kiln.Build, error)
}

// Workflow is the in-process workflow: it takes builds from the queue and changes their status
// only through the lifecycle.
type Workflow struct {
	queue  Queue
	builds *builds.Lifecycle
	// host names this machine ("local/<hostname>"); worker n claims builds as host + "/worker-n".
	host    string
	runner  Runner
	workers int
	logger  *slog.Logger

	wake    wake.Signal
	mu      sync.Mutex
	running map[string]*claimed // build id → a build claimed here and not ended

	// pickMu makes one worker at a time choose and claim a build, so each sees the others' claims.
	pickMu sync.Mutex
	turns  map[string]uint64 // organization id → number of its last turn (see pick)
	turn   uint64            // number of the last turn given
	wg     sync.WaitGroup
	stop   context.CancelFunc

	// OrgLimit caps the builds of one organization running at once (KILN_ORG_MAX_RUNNING; a
	// plan's limit may take its place). nil means the number of workers.
	OrgLimit OrgLimit
	// AgentWait is how long a build for an agent pool may wait for an agent before it fails
	// (KILN_AGENT_WAIT; 0: DefaultAgentWait).
	AgentWait time.Duration
}

// DefaultAgentWait is how long a build waits for an agent of its pool unless AgentWait says
// otherwise.
const DefaultAgentWait = 30 * time.Minute

var _ builds.Workflow = (*Workflow)(nil)

// Timings; variables so tests can shorten them.
var (
	// heartbeatEvery is how often a running build's host reports that it is alive.
	heartbeatEvery = 5 * time.Second
	// pollEvery is how often idle workers look at the queue without being woken.
	pollEvery = 2 * time.Second
	// watchEvery is how often the watchdog looks for silent hosts.
	watchEvery = 5 * time.Second
)

// maxPendingScan bounds how much of the pending queue a worker reads to choose a build.
const maxPendingScan = 10_000

// New makes the workflow; Run starts it.
func New(queue Queue, lifecycle *builds.Lifecycle, runner Runner, workers int, logger *slog.Logger) *Workflow {
	if logger == nil {
		logger = slog.Default()
	}
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	return &Workflow{queue: queue, builds: lifecycle, host: "local/" + host, runner: runner, workers: max(1, workers), logger: logger,
		running: map[string]*claimed{}, turns: map[string]uint64{}}
}

// Run fails the builds a previous run left running, then starts the workers and the watchdog. It
// returns at once; Shutdown stops them.
func (w *Workflow) Run(ctx context.Context) error {
	if err := w.failInterrupted(ctx); err != nil {
		return err
	}
	ctx, w.stop = context.WithCancel(context.WithoutCancel(ctx))
	for n := range w.workers {
		host := fmt.Sprintf("%s/worker-%d", w.host, n+1)
		w.wg.Go(func() { w.work(ctx, host) })
	}
	w.wg.Go(func() { w.watch(ctx) })
	w.poke()
	return nil
}

// Shutdown stops taking builds, stops the running ones (they are failed as interrupted) and
// waits for the workers, up to ctx's deadline.
func (w *Workflow) Shutdown(ctx context.Context) error {
	if w.stop != nil {
		w.stop()
	}
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Start wakes a worker for a new pending build.
func (w *Workflow) Start(ctx context.Context, b *kiln.Build) error {
	w.poke()
	return nil
}

// Stop stops a build running here (its status was already set by whoever stopped it).
func (w *Workflow) Stop(ctx context.Context, b *kiln.Build) error {
	w.mu.Lock()
	var cancel context.CancelFunc
	if c := w.running[b.ID]; c != nil {
		cancel = c.cancel
	}
	w.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}

// claimed is a build claimed here and not ended: its organization, and how to stop it once it
// runs.
type claimed struct {
	orgID  string
	cancel context.CancelFunc
}

// runningPerOrganization counts the builds claimed here and not ended, per organization.
func (w *Workflow) runningPerOrganization() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	counts := map[string]int{}
	for _, c := range w.running {
		counts[c.orgID]++
	}
	return counts
}

func (w *Workflow) poke() { w.wake.Notify() }

// work takes pending builds for host, fairly across organizations, until ctx ends.
func (w *Workflow) work(ctx context.Context, host string) {
	for ctx.Err() == nil {
		b, err := w.claim(ctx, host)
		if err != nil {
			w.logger.ErrorContext(ctx, "take a build from the queue", slog.String("error", err.Error()))
		}
		if b == nil {
			select {
			case <-ctx.Done():
			case <-w.wake.C():
			case <-time.After(pollEvery):
			}
			continue
		}
		w.poke() // more may be waiting: let another worker look
		w.runOne(ctx, b)
	}
}

// claim moves the next pending build (see pick) to running for host; of several workers (or
// processes) only one wins each build.
func (w *Workflow) claim(ctx context.Context, host string) (*kiln.Build, error) {
	w.pickMu.Lock()
	defer w.pickMu.Unlock()
	pending, err := w.pending(ctx)
	if err != nil {
		return nil, err
	}
	// A build for an agent pool waits for an agent of its organization in that pool: this
	// machine's workers never take it.
	pending = slices.DeleteFunc(pending, func(b *kiln.Build) bool { return b.AgentPool != "" })
	running := w.runningPerOrganization()
	limit := memoLimit(w.orgLimit) // one look at each organization's limit per choice
	for {
		next := pick(pending, running, w.turns, limit, 1)
		if len(next) == 0 {
			return nil, nil
		}
		listed := next[0]
		pending = slices.DeleteFunc(pending, func(p *kiln.Build) bool { return p == listed })
		b, err := w.builds.Claim(ctx, listed.OrganizationID, listed.ID, host)
		if kiln.IsCode(err, kiln.EInvalidState) {
			continue // another worker took it, or it was cancelled or superseded
		}
		if err != nil {
			return nil, err
		}
		w.recordTurn(b.OrganizationID)
		w.mu.Lock()
		w.running[b.ID] = &claimed{orgID: b.OrganizationID} // counted from now; runOne adds cancel
		w.mu.Unlock()
		return b, nil
	}
}

// pending reads the pending queue, oldest first, page by page (up to maxPendingScan builds).
func (w *Workflow) pending(ctx context.Context) ([]*kiln.Build, error) {
	return store.ReadQueue(ctx, w.queue, kiln.StatusPending, maxPendingScan)
}

// recordTurn notes that org had the latest turn. The record of turns forgets organizations only
// when it grows past maxTurns (all then start equal), so it stays small.
func (w *Workflow) recordTurn(org string) {
	if len(w.turns) >= maxTurns {
		clear(w.turns)
	}
	w.turn++
	w.turns[org] = w.turn
}

// maxTurns bounds the record of turns.
const maxTurns = 100_000

func (w *Workflow) orgLimit(orgID string) int {
	if w.OrgLimit == nil {
		return w.workers
	}
	return w.OrgLimit(orgID)
}

// runOne runs a claimed build with a heartbeat, and makes sure it does not stay running.
func (w *Workflow) runOne(ctx context.Context, b *kiln.Build) {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.mu.Lock()
	w.running[b.ID] = &claimed{orgID: b.OrganizationID, cancel: cancel}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.running, b.ID)
		w.mu.Unlock()
		w.poke() // a worker may take a build its organization's limit held back
	}()
	go w.heartbeat(bctx, cancel, b)
	logger := w.logger.With(slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID), slog.String("host", b.Host))
	logger.InfoContext(ctx, "build started")
	err := w.runner.Run(bctx, b)
	if err != nil && ctx.Err() != nil {
		// The service is stopping: the build cannot finish here.
		w.interrupted(context.WithoutCancel(ctx), b)
	}
	logger.InfoContext(ctx, "build ended")
}

// heartbeat records every few seconds that the build's host (the worker that claimed it, b.Host)
// is alive. When the build is no longer running (cancelled, superseded, failed by the watchdog)
// or another host holds it, it stops the build.
func (w *Workflow) heartbeat(ctx context.Context, cancel context.CancelFunc, b *kiln.Build) {
	wake.Every(ctx, heartbeatEvery, func(ctx context.Context) bool {
		if err := w.builds.Heartbeat(ctx, b.OrganizationID, b.ID, b.Host); kiln.IsCode(err, kiln.EInvalidState) {
			cancel() // it is no longer running
			return false
		}
		return true
	})
}
