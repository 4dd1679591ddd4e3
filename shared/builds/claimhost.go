package builds

import (
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
