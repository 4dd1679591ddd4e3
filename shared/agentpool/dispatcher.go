package agentpool

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// Dispatcher hands pending builds to agents that claim them: a build of the agent's
// organization, for the agent's pool, of a platform and engine version the agent offers, oldest
// first. A claim with nothing to take waits (up to the wait the agent asked for) until Notify
// tells of a new build, then looks again; it never polls the store meanwhile.
type Dispatcher struct {
	Store     Store
	Lifecycle Lifecycle
	// Hosted records the one claim of each of kiln's own hosts (kiln.Agent.Hosted); nil: this
	// deployment has none, and a hosted agent claims nothing.
	Hosted HostedClaims
	// StartGrace is how long a claimed build's agent may take to report before its silence
	// counts (see builds.Lifecycle.ClaimHost; 0: DefaultStartGrace).
	StartGrace time.Duration
	Logger     *slog.Logger
	Now        func() time.Time

	mu       sync.Mutex
	queued   chan struct{}        // closed by Notify, then replaced
	gen      uint64               // Notify calls so far
	scan     *scan                // the read of the pending queue under way, if any
	claiming map[string]time.Time // build id → claimed here, or a claim under way (zero time)
	touched  map[string]time.Time // agent id → the LastSeenAt last recorded
}

// scan is one read of the pending queue, shared by the claims that look at once.
type scan struct {
	gen    uint64 // Notify calls when it started: builds queued before then are in it
	done   chan struct{}
	builds []*kiln.Build
	err    error
}

// forgetClaimed is how long a build claimed here is skipped without asking the store: longer
// than a shared read of the queue that still lists it as pending can be in use.
const forgetClaimed = time.Minute

// DefaultStartGrace: an agent starts the build it claimed at once.
const DefaultStartGrace = 10 * time.Second

// MaxWait is the longest a claim waits for a build.
const MaxWait = 30 * time.Second

// touchEvery is how stale an agent's recorded LastSeenAt may get: a claim records it only
// when the last record is older, so that idle agents polling do not write on every claim.
const touchEvery = time.Minute

// maxPendingScan bounds how much of the pending queue one look reads.
const maxPendingScan = 10_000

// HostedClaims records the claims of kiln's own hosts (store.HostedHosts).
type HostedClaims interface {
	GetHostedHost(ctx context.Context, id string) (*kiln.HostedHost, error)
	ClaimHostedHost(ctx context.Context, h *kiln.HostedHost) error
}

// Offer is what an agent can build.
type Offer struct {
	Platforms      []kiln.Platform
	EngineVersions []string
}

// Claimed is a build handed to an agent, with the host credential it runs it with.
type Claimed struct {
	Build      *kiln.Build
	Credential string
}

// Notify tells the waiting claims that a build was queued: they all look again.
func (d *Dispatcher) Notify() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	if d.queued != nil {
		close(d.queued)
		d.queued = nil
	}
}

// waitQueued is the channel the next Notify closes, and the number of Notify calls so far.
func (d *Dispatcher) waitQueued() (<-chan struct{}, uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.queued == nil {
		d.queued = make(chan struct{})
	}
	return d.queued, d.gen
}

// pending reads the pending queue (up to maxPendingScan builds, oldest first). Claims that look
// at once share one read, as long as it started after every build they were told of (gen), so
// a hundred agents polling cost one read rather than a hundred.
func (d *Dispatcher) pending(ctx context.Context, gen uint64) ([]*kiln.Build, error) {
	d.mu.Lock()
	if s := d.scan; s != nil && s.gen >= gen {
		d.mu.Unlock()
		select {
		case <-s.done:
			return s.builds, s.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s := &scan{gen: d.gen, done: make(chan struct{})}
	d.scan = s
	d.mu.Unlock()
	s.builds, s.err = d.readPending(context.WithoutCancel(ctx)) // others may wait for it
	d.mu.Lock()
	if d.scan == s {
		d.scan = nil
	}
	d.mu.Unlock()
	close(s.done)
	return s.builds, s.err
}

func (d *Dispatcher) readPending(ctx context.Context) ([]*kiln.Build, error) {
	return store.ReadQueue(ctx, d.Store, kiln.StatusPending, maxPendingScan)
}

// Authenticate finds the agent of a token; a malformed, unknown or revoked token is
// invalid_token, all alike.
func (d *Dispatcher) Authenticate(ctx context.Context, token string) (*kiln.Agent, error) {
	refused := kiln.Errorf(kiln.EInvalidToken, "an agent token is required: Authorization: Bearer kagent_…")
	if !auth.WellFormedAgent(token) {
		return nil, refused
	}
	a, err := d.Store.GetAgentByHash(ctx, auth.HashToken(token))
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, refused
	}
	if err != nil {
		return nil, err
	}
	if a.Revoked() {
		return nil, kiln.Errorf(kiln.EInvalidToken, "the agent's token was revoked")
	}
	d.touch(ctx, a)
	return a, nil
}

// touch records that the agent called, at most every touchEvery.
func (d *Dispatcher) touch(ctx context.Context, a *kiln.Agent) {
	now := d.now()
	d.mu.Lock()
	last, ok := d.touched[a.ID]
	if !ok && a.LastSeenAt != nil {
		last, ok = *a.LastSeenAt, true
	}
	if ok && now.Sub(last) < touchEvery {
		d.mu.Unlock()
		return
	}
	if d.touched == nil {
		d.touched = map[string]time.Time{}
	}
	d.touched[a.ID] = now
	d.mu.Unlock()
	if err := d.Store.TouchAgent(ctx, a.OrganizationID, a.ID, now); err != nil {
		d.log().WarnContext(ctx, "record that an agent called", slog.String("agent_id", a.ID), slog.String("error", err.Error()))
	}
}

// Claim hands agent a a build it can run, waiting up to wait (at most MaxWait) for one to be
// queued; nil when none came. The build is claimed for host "agent:<id>" with a fresh host
// credential, whose hash the build keeps.
func (d *Dispatcher) Claim(ctx context.Context, a *kiln.Agent, offer Offer, wait time.Duration) (*Claimed, error) {
	if err := d.mayClaim(ctx, a); err != nil {
		return nil, err
	}
	timer := time.NewTimer(min(max(wait, 0), MaxWait))
	defer timer.Stop()
	for {
		queued, gen := d.waitQueued() // before looking: a build queued meanwhile wakes the wait
		c, err := d.tryClaim(ctx, a, offer, gen)
		if c != nil || err != nil {
			return c, err
		}
		select {
		case <-queued:
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, nil
		}
	}
}

// tryClaim claims the oldest pending build the agent may take, if any.
func (d *Dispatcher) tryClaim(ctx context.Context, a *kiln.Agent, offer Offer, gen uint64) (*Claimed, error) {
	pending, err := d.pending(ctx, gen)
	if err != nil {
		return nil, err
	}
	for _, b := range pending {
		if !fits(a, offer, b) || !d.reserve(b.ID) {
			continue
		}
		c, err := d.claim(ctx, a, b)
		d.release(b.ID, err == nil)
		if kiln.IsCode(err, kiln.EInvalidState) {
			continue // taken by another process's agent, cancelled or superseded meanwhile
		}
		return c, err
	}
	return nil, nil
}

func (d *Dispatcher) claim(ctx context.Context, a *kiln.Agent, b *kiln.Build) (*Claimed, error) {
	cred, hash, err := hostcred.New(b.OrganizationID, b.ID)
	if err != nil {
		return nil, err
	}
	grace := d.StartGrace
	if grace == 0 {
		grace = DefaultStartGrace
	}
	if err := d.stillValid(ctx, a); err != nil {
		return nil, err
	}
	claimed, err := d.Lifecycle.ClaimHost(ctx, b.OrganizationID, b.ID, a.BuildHost(), hash, grace)
	if err != nil {
		return nil, err
	}
	if err := d.stillValid(ctx, a); err != nil {
		// Revoked between the look and the claim, after the revocation failed the agent's
		// running builds: fail this one too, and never hand out its credential.
		if _, ferr := d.Lifecycle.Fail(ctx, b.OrganizationID, b.ID, ReasonRevoked); ferr != nil && !kiln.IsCode(ferr, kiln.EInvalidState) {
			d.log().ErrorContext(ctx, "fail the build a revoked agent claimed", slog.String("build_id", b.ID), slog.String("error", ferr.Error()))
		}
		return nil, err
	}
	if a.Hosted {
		if err := d.recordHosted(ctx, a, claimed); err != nil {
			return nil, err
		}
	}
	d.log().InfoContext(ctx, "an agent claimed a build", slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID),
		slog.String("agent_id", a.ID), slog.Bool("hosted", a.Hosted))
	return &Claimed{Build: claimed, Credential: cred}, nil
}

// stillValid reads an organization's agent again just before and after it claims a build: a
// claim waits up to MaxWait after its token was checked, and a token revoked meanwhile must not
// get a build (invalid_token, as for a revoked token at the start). Of the revocation and the
// claim, whichever writes second sees the other: the revocation fails the builds the agent
// holds after revoking, the claim reads the agent after claiming.
func (d *Dispatcher) stillValid(ctx context.Context, a *kiln.Agent) error {
	if a.Hosted {
		return nil // one of kiln's hosts: verified by its instance identity, never revoked
	}
	now, err := d.Store.GetAgentByHash(ctx, a.Hash)
	switch {
	case kiln.IsCode(err, kiln.ENotFound):
		return kiln.Errorf(kiln.EInvalidToken, "the agent's token was revoked")
	case err != nil:
		return fmt.Errorf("read the claiming agent: %w", err)
	case now.Revoked() || now.ID != a.ID:
		return kiln.Errorf(kiln.EInvalidToken, "the agent's token was revoked")
	}
	return nil
}

// mayClaim refuses a hosted agent when the deployment has no hosted hosts or the instance
// claimed its one build already; an organization's agent may always claim.
func (d *Dispatcher) mayClaim(ctx context.Context, a *kiln.Agent) error {
	if !a.Hosted {
		return nil
	}
	if d.Hosted == nil {
		return kiln.Errorf(kiln.EInsufficientScope, "this deployment runs no hosted hosts")
	}
	h, err := d.Hosted.GetHostedHost(ctx, a.ID)
	switch {
	case kiln.IsCode(err, kiln.ENotFound):
		return nil
	case err != nil:
		return fmt.Errorf("read the hosted host's record: %w", err)
	case h.Claimed():
		return ErrHostClaimed
	}
	return nil
}

// recordHosted records that hosted agent a claimed build b: the instance's one claim, ever.
// Another claim recorded first (the same instance claiming twice at once) fails b rather than
// hand the instance a second build; b's credential is never returned.
func (d *Dispatcher) recordHosted(ctx context.Context, a *kiln.Agent, b *kiln.Build) error {
	at := d.now()
	err := d.Hosted.ClaimHostedHost(ctx, &kiln.HostedHost{ID: a.ID, SeenAt: at, ClaimedAt: &at, OrganizationID: b.OrganizationID, BuildID: b.ID})
	if err == nil {
		return nil
	}
	if _, ferr := d.Lifecycle.Fail(ctx, b.OrganizationID, b.ID, "host lost: its hosted host may claim no more builds (it claimed one already, or was retired idle)"); ferr != nil && !kiln.IsCode(ferr, kiln.EInvalidState) {
		d.log().ErrorContext(ctx, "fail a build its hosted host may not take", slog.String("build_id", b.ID), slog.String("error", ferr.Error()))
	}
	if kiln.IsCode(err, kiln.EConflict) {
		return ErrHostClaimed
	}
	return fmt.Errorf("record the hosted host's claim: %w", err)
}

// ErrHostClaimed refuses a claim of one of kiln's hosts that claimed its one build already.
var ErrHostClaimed = kiln.Errorf(kiln.EInsufficientScope, "this host claimed its one build already; a hosted host runs one build and is replaced")

// fits reports whether agent a may take build b: an organization's agent only its own
// organization's builds of its pool; one of kiln's hosts only builds of its reserved pool, of
// any organization. Either only of a platform and engine version it offers.
func fits(a *kiln.Agent, offer Offer, b *kiln.Build) bool {
	if b.AgentPool == "" || b.AgentPool != a.Pool || b.Status != kiln.StatusPending {
		return false
	}
	if a.Hosted != kiln.ReservedPool(b.AgentPool) || (!a.Hosted && b.OrganizationID != a.OrganizationID) {
		return false
	}
	if !slices.Contains(offer.Platforms, b.Platform) {
		return false
	}
	for _, v := range engines.Candidates(b.UEVersion) {
		if slices.Contains(offer.EngineVersions, v) {
			return true
		}
	}
	return false
}

// reserve marks a build as being claimed here, so that concurrent claims of this process try
// other builds rather than race for it; false when one does, or one claimed it lately.
func (d *Dispatcher) reserve(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.claiming[id]; ok {
		return false
	}
	if d.claiming == nil {
		d.claiming = map[string]time.Time{}
	}
	d.claiming[id] = time.Time{}
	return true
}

// release ends the claim of a build: one claimed is remembered for a while (a shared read of
// the queue may still list it), one not claimed may be tried again at once.
func (d *Dispatcher) release(id string, claimed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !claimed {
		delete(d.claiming, id)
		return
	}
	now := time.Now()
	d.claiming[id] = now
	if len(d.claiming)%1024 == 0 { // now and then, forget the old ones
		for k, at := range d.claiming {
			if !at.IsZero() && now.Sub(at) > forgetClaimed {
				delete(d.claiming, k)
			}
		}
	}
}

func (d *Dispatcher) now() time.Time { return kiln.Now(d.Now) }

func (d *Dispatcher) log() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.Default()
}
