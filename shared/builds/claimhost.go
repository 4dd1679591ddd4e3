package builds

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// ClaimHost claims a pending build for a remote host (a build host launched for it, or an agent)
// and records the hash of the credential that host will report with (see package hostcred), in
// the same conditional write. Claiming it again for the same host (a retried claim task) keeps
// it running and replaces the hash: only the credential of the last claim works, which is the
// one whoever retried hands on. Another host is refused (invalid_state), as is an ended build.
//
// startGrace is how long the host may take to start before its silence counts: a host launched
// for the build (a CodeBuild container pulling an engine image) reports only once it runs, so
// the first heartbeat is recorded startGrace after the claim.
func (l *Lifecycle) ClaimHost(ctx context.Context, orgID, id, host, credentialHash string, startGrace time.Duration) (*kiln.Build, error) {
	if host == "" || credentialHash == "" {
		return nil, kiln.Errorf(kiln.EValidation, "claim build %s: a remote claim names its host and its credential", id)
	}
	b, was, changed, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusPending, kiln.StatusRunning}, to: kiln.StatusRunning,
		allow: func(b *kiln.Build) error {
			if b.Status == kiln.StatusRunning && b.Host != host {
				return kiln.Errorf(kiln.EInvalidState, "the build is held by another host")
			}
			return l.mayStart(ctx, b)
		},
		edit: func(b *kiln.Build) {
			if b.Host == "" {
				at := b.StartedAt.Add(max(startGrace, 0))
				b.HeartbeatAt, b.Host = &at, host
			}
			b.HostCredentialHash = credentialHash
		},
	})
	if err != nil {
		return nil, l.refuseStart(ctx, orgID, id, err)
	}
	if changed && was == kiln.StatusPending {
		l.log().InfoContext(ctx, "build claimed", slog.String("build_id", id), slog.String("org_id", orgID), slog.String("host", host))
	}
	return b, nil
}

// ReserveHost names the remote host that is to run a pending build (a CodeBuild host started
// for it) and records the hash of the credential that host will report with, in one
// conditional write. The build stays pending: it waits for its host (CodeBuild's queue, the
// account's quota, the image pull) without counting as running or as build minutes, until the
// host starts it (StartOnHost). Reserving it again for the same host (a retried claim task)
// replaces the hash: only the last credential works. A build reserved for, or run by, another
// host is invalid_state, as is an ended one; a build its plan does not let start is failed
// (see Claim).
func (l *Lifecycle) ReserveHost(ctx context.Context, orgID, id, host, credentialHash string) (*kiln.Build, error) {
	if host == "" || credentialHash == "" {
		return nil, kiln.Errorf(kiln.EValidation, "reserve build %s: a reservation names its host and its credential", id)
	}
	b, _, changed, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusPending}, keep: true,
		allow: func(b *kiln.Build) error {
			if b.Host != "" && b.Host != host {
				return kiln.Errorf(kiln.EInvalidState, "the build is reserved for another host")
			}
			return l.mayStart(ctx, b)
		},
		edit: func(b *kiln.Build) { b.Host, b.HostCredentialHash = host, credentialHash },
	})
	if err != nil {
		return nil, l.refuseStart(ctx, orgID, id, err)
	}
	if changed {
		l.log().InfoContext(ctx, "build reserved for its host", slog.String("build_id", id), slog.String("org_id", orgID), slog.String("host", host))
	}
	return b, nil
}

// StartOnHost moves a pending build reserved for host (ReserveHost) to running, now: the host
// runs it, and its startedAt and first heartbeat are this moment. runs, when set, replaces the
// build's host with what runs it (the CodeBuild build's own id, so that stopping the build stops
// it). A build already running on that host (a retried start) is answered as it is; any other
// is invalid_state.
func (l *Lifecycle) StartOnHost(ctx context.Context, orgID, id, host, runs string) (*kiln.Build, error) {
	if host == "" {
		return nil, kiln.Errorf(kiln.EValidation, "start build %s: no host named", id)
	}
	runsOn := cmp.Or(runs, host)
	b, _, started, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusPending}, to: kiln.StatusRunning,
		allow: func(b *kiln.Build) error {
			if b.Host != host {
				return kiln.Errorf(kiln.EInvalidState, "the build is not reserved for this host")
			}
			return nil
		},
		edit: func(b *kiln.Build) { at := *b.StartedAt; b.HeartbeatAt, b.Host = &at, runsOn },
		repeat: func(b *kiln.Build) bool {
			return b.Status == kiln.StatusRunning && (b.Host == runsOn || b.Host == host)
		},
	})
	if err != nil {
		return nil, err
	}
	if started {
		l.log().InfoContext(ctx, "build started on its host", slog.String("build_id", id), slog.String("org_id", orgID), slog.String("host", runsOn))
	}
	return b, nil
}
