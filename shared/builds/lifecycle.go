package builds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// Lifecycle owns every change of a build's status: claim, heartbeat, complete, fail, cancel,
// supersede and the recovery of builds whose host went silent or was stopped. Each change is
// one conditional write on the build's status, read fresh just before, so of two changes at
// once exactly one wins; the project notes the change and Events hears of it once, after the
// write. Repeating a call (a retried Lambda, a redelivered Step Functions task) never counts a
// change twice and never brings an ended build back.
//
// The in-process workflow, the runner and the API's service are thin callers of it.
type Lifecycle struct {
	Builds    store.Builds
	Projects  store.Projects
	Artifacts store.Artifacts // only Complete uses it
	Events    Events          // nil: nobody listens
	// Starts checks the plan's allowance of a pending build at its claim (nil: no plans): a
	// build it refuses is failed with ReasonPlanLimit instead of starting.
	Starts StartCheck
	Logger *slog.Logger
	Now    func() time.Time

	// writing serializes the read and write of a change per build within this process, so two
	// writes that keep the status (a heartbeat, the commit found) cannot undo each other. Across
	// processes the conditional write on the status decides.
	writing [64]sync.Mutex
}

// Failure reasons the lifecycle sets.
const (
	ReasonCancelled   = "cancelled"
	ReasonInterrupted = "interrupted: the service stopped while the build ran; trigger it again"
	ReasonSilentHost  = "the build host stopped reporting for 30 seconds"
)

// maxChangeAttempts bounds how often a change is tried again when the build's status moved
// between reading and writing it.
const maxChangeAttempts = 5

// change is one status change: from one of from to to (to may equal the status for a write that
// keeps it, such as a heartbeat).
type change struct {
	from []kiln.BuildStatus
	to   kiln.BuildStatus
	// reason is the failure reason when to is failed.
	reason string
	// allow, when set, may refuse the change for the build as read (nil error: go ahead).
	allow func(b *kiln.Build) error
	// edit sets more fields on the build before it is written.
	edit func(b *kiln.Build)
	// keep makes the change keep whichever status of from the build has (to is then unused): a
	// write of other fields, such as the workflow's task token.
	keep bool
	// repeat reports whether a build outside from is already what this change makes, so that a
	// repeated call answers as the first did instead of invalid_state.
	repeat func(b *kiln.Build) bool
}

// apply makes a change to the stored build. It returns the build as written and the status it
// had before; changed is false for a repeat (nothing written, no events). A build in a status
// the change does not start from is invalid_state.
func (l *Lifecycle) apply(ctx context.Context, orgID, id string, c change) (b *kiln.Build, was kiln.BuildStatus, changed bool, err error) {
	for range maxChangeAttempts {
		b, was, changed, err = l.write(ctx, orgID, id, c)
		if errors.Is(err, errChangedMeanwhile) {
			continue // it changed between reading and writing: look again
		}
		if changed && !c.keep && c.to != was {
			l.changed(ctx, was, b)
		}
		return b, was, changed, err
	}
	return nil, "", false, fmt.Errorf("build %s: its status kept changing", id)
}

// errChangedMeanwhile marks a conditional write that lost to another change.
var errChangedMeanwhile = errors.New("the build changed meanwhile")

// write reads the build and writes the change once.
func (l *Lifecycle) write(ctx context.Context, orgID, id string, c change) (b *kiln.Build, was kiln.BuildStatus, changed bool, err error) {
	mu := &l.writing[fnv32(id)%uint32(len(l.writing))]
	mu.Lock()
	defer mu.Unlock()
	b, err = l.Builds.GetBuild(ctx, orgID, id)
	if err != nil {
		return nil, "", false, err
	}
	was = b.Status
	read := *b
	if c.keep {
		c.to = was
	}
	if !slices.Contains(c.from, was) {
		if c.repeat != nil && c.repeat(b) {
			return b, was, false, nil
		}
		if c.keep {
			return b, was, false, kiln.Errorf(kiln.EInvalidState, "the build is %s", was)
		}
		return b, was, false, kiln.Errorf(kiln.EInvalidState, "the build is %s and cannot become %s", was, c.to)
	}
	if c.allow != nil {
		if err := c.allow(b); err != nil {
			return b, was, false, err
		}
	}
	if c.to != was {
		if err := b.Transition(c.to, l.now(), c.reason); err != nil {
			return b, was, false, err
		}
	}
	if c.edit != nil {
		c.edit(b)
	}
	// Only what this change changed is written: a concurrent write of other fields (a host's
	// heartbeat, the workflow's task token) stays.
	err = l.Builds.UpdateBuild(ctx, b, was, kiln.ChangedBuildFields(&read, b))
	if kiln.IsCode(err, kiln.EInvalidState) {
		return nil, was, false, errChangedMeanwhile
	}
	if err != nil {
		return nil, was, false, fmt.Errorf("build %s: %s → %s: %w", id, was, c.to, err)
	}
	return b, was, true, nil
}

// fnv32 hashes a build id to pick its lock.
func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// changed tells the project and the listeners of a change that was written.
func (l *Lifecycle) changed(ctx context.Context, from kiln.BuildStatus, b *kiln.Build) {
	ctx = context.WithoutCancel(ctx) // it happened: tell everyone even if the caller gave up
	NoteOnProject(ctx, l.Builds, l.Projects, b, l.log())
	if l.Events != nil {
		l.Events.BuildChanged(ctx, from, b)
	}
}

// Created tells of a build just created (pending).
func (l *Lifecycle) Created(ctx context.Context, b *kiln.Build) {
	l.changed(ctx, "", b)
}

// Claim moves a pending build to running for the host (or executor) that takes it, and records
// that host in the same conditional write. A build its plan does not let start (Starts) is
// failed instead, and the answer is invalid_state. Of several hosts claiming at once exactly one wins;
// the others get invalid_state. The host that holds the build claiming it again (a retried
// Lambda, a redelivered task) gets the build as it is, and nobody hears of it twice.
func (l *Lifecycle) Claim(ctx context.Context, orgID, id, host string) (*kiln.Build, error) {
	if host == "" {
		return nil, kiln.Errorf(kiln.EValidation, "claim build %s: no host named", id)
	}
	b, _, claimed, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusPending}, to: kiln.StatusRunning,
		allow:  func(b *kiln.Build) error { return l.mayStart(ctx, b) },
		edit:   func(b *kiln.Build) { at := *b.StartedAt; b.HeartbeatAt, b.Host = &at, host },
		repeat: func(b *kiln.Build) bool { return b.Status == kiln.StatusRunning && b.Host == host },
	})
	if err != nil {
		return nil, l.refuseStart(ctx, orgID, id, err)
	}
	if claimed {
		l.log().InfoContext(ctx, "build claimed", slog.String("build_id", id), slog.String("org_id", orgID), slog.String("host", host))
	}
	return b, nil
}

// Heartbeat records that host, which runs the build, is alive. A build no longer running, or
// held by another host, is invalid_state: the host should stop it. (A running build's host never
// changes: only the claim from pending sets it, and a build never returns to pending; so the
// host read just before the write is the host the status condition of the write guards.)
func (l *Lifecycle) Heartbeat(ctx context.Context, orgID, id, host string) error {
	_, _, _, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusRunning}, to: kiln.StatusRunning,
		allow: func(b *kiln.Build) error {
			if b.Host != host {
				return kiln.Errorf(kiln.EInvalidState, "the build is held by another host")
			}
			return nil
		},
		edit: func(b *kiln.Build) { at := l.now(); b.HeartbeatAt = &at },
	})
	return err
}

// Progress records what a running build learnt on the way (the commit it checked out) with
// edit. A build no longer running is invalid_state. Events that are CommitEvents hear of a
// commit the build did not have before.
func (l *Lifecycle) Progress(ctx context.Context, orgID, id string, edit func(b *kiln.Build)) (*kiln.Build, error) {
	learnt := false
	b, _, changed, err := l.apply(ctx, orgID, id, change{from: []kiln.BuildStatus{kiln.StatusRunning}, to: kiln.StatusRunning,
		edit: func(b *kiln.Build) {
			had := b.Commit
			edit(b)
			learnt = had == "" && b.Commit != ""
		}})
	if ce, ok := l.Events.(CommitEvents); ok && err == nil && changed && learnt {
		ce.CommitLearned(context.WithoutCancel(ctx), b)
	}
	return b, err
}

// Complete records a running build's artifact and completes the build. Called again after it
// succeeded, it answers the same and changes nothing. If the build ended otherwise first
// (cancelled, superseded, failed), the artifact record is removed again and the answer is
// invalid_state: the caller then deletes the artifact's object.
func (l *Lifecycle) Complete(ctx context.Context, a *kiln.Artifact) (*kiln.Build, error) {
	ctx = context.WithoutCancel(ctx) // the artifact exists: finish what it takes to record it
	if err := l.Artifacts.CreateArtifact(ctx, a); kiln.IsCode(err, kiln.EConflict) {
		had, gerr := l.Artifacts.GetArtifact(ctx, a.OrganizationID, a.BuildID)
		if gerr != nil {
			return nil, fmt.Errorf("complete build %s: %w", a.BuildID, gerr)
		}
		if had.Key != a.Key {
			return nil, fmt.Errorf("complete build %s: it already has another artifact (%s)", a.BuildID, had.Key)
		}
	} else if err != nil {
		return nil, fmt.Errorf("complete build %s: record the artifact: %w", a.BuildID, err)
	}
	b, _, _, err := l.apply(ctx, a.OrganizationID, a.BuildID, change{
		from: []kiln.BuildStatus{kiln.StatusRunning}, to: kiln.StatusComplete,
		repeat: func(b *kiln.Build) bool { return b.Status == kiln.StatusComplete },
	})
	if kiln.IsCode(err, kiln.EInvalidState) {
		if derr := l.Artifacts.DeleteArtifact(ctx, a.OrganizationID, a.BuildID); derr != nil && !kiln.IsCode(derr, kiln.ENotFound) {
			l.log().WarnContext(ctx, "remove the artifact record of a build that ended otherwise",
				slog.String("build_id", a.BuildID), slog.String("error", derr.Error()))
		}
	}
	return b, err
}

// Fail fails a pending or running build with a reason. Called again with the same reason after
// it succeeded, it answers the same and changes nothing; a build that ended otherwise is
// invalid_state.
func (l *Lifecycle) Fail(ctx context.Context, orgID, id, reason string) (*kiln.Build, error) {
	b, _, _, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusPending, kiln.StatusRunning}, to: kiln.StatusFailed, reason: reason,
		repeat: func(b *kiln.Build) bool { return b.Status == kiln.StatusFailed && b.FailureReason == reason },
	})
	return b, err
}

// Cancel fails a pending or running build as cancelled and reports the status it had (the
// caller stops a running one). A build that already ended, a cancelled one included, is
// invalid_state.
func (l *Lifecycle) Cancel(ctx context.Context, orgID, id string) (b *kiln.Build, was kiln.BuildStatus, err error) {
	b, was, _, err = l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusPending, kiln.StatusRunning}, to: kiln.StatusFailed, reason: ReasonCancelled,
	})
	if kiln.IsCode(err, kiln.EInvalidState) && was != "" {
		return b, was, kiln.Errorf(kiln.EInvalidState, "the build already ended (%s)", was)
	}
	return b, was, err
}

// Supersede moves a pending or running build to superseded and reports the status it had (the
// caller stops a running one). A build that already ended is invalid_state.
func (l *Lifecycle) Supersede(ctx context.Context, orgID, id string) (b *kiln.Build, was kiln.BuildStatus, err error) {
	b, was, _, err = l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusPending, kiln.StatusRunning}, to: kiln.StatusSuperseded,
	})
	return b, was, err
}

func (l *Lifecycle) now() time.Time { return kiln.Now(l.Now) }

func (l *Lifecycle) log() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.Default()
}
