package hostclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
	"github.com/kilnbuild/kiln/shared/runner"
)

// Host is a build host that runs one build.
type Host struct {
	Client *Client
	// HostRunID is what runs the host (CODEBUILD_BUILD_ID), reported at start; "" for none.
	HostRunID string
	Engines   runner.EngineResolver
	// Steps runs the steps; its Artifacts is set to the service's upload.
	Steps *buildsteps.Steps
	// P4 opens Perforce clients with the job's credentials; nil: this host builds no Perforce
	// projects.
	P4 *perforce.Verifier
	// WorkDir holds the workspace and staging directories.
	WorkDir string
	// DiskReserve is the free space WorkDir's volume keeps (KILN_DISK_RESERVE, in bytes): a build
	// does not start with less free, and is stopped, its workspace removed, before free space
	// falls below it. 0: no reserve.
	DiskReserve int64
	// HeartbeatEvery is how often the host reports alive (0: DefaultHeartbeatEvery).
	HeartbeatEvery time.Duration
	// Concurrency is how many artifact parts are sent at once (0: DefaultConcurrency).
	Concurrency int
	Logger      *slog.Logger
}

// DefaultHeartbeatEvery is well within the 30 seconds after which a silent host's build fails.
const DefaultHeartbeatEvery = 10 * time.Second

// ErrEnded is returned by Run when the service ended the build while the host ran it
// (cancelled, superseded, or failed as silent): the host stopped it.
var ErrEnded = errors.New("the service ended the build while it ran")

// Run runs the host's build to its end and returns the status the build ended with: complete
// or failed (the build's failure is in its log and failureReason, not an error). An error means
// the host could not finish: it could not start, or the service ended the build (ErrEnded).
func (h *Host) Run(ctx context.Context) (kiln.BuildStatus, error) {
	logger := h.Logger
	if logger == nil {
		logger = slog.Default()
	}
	first, err := h.Client.Start(ctx, h.HostRunID)
	if err != nil {
		return "", fmt.Errorf("start the build: %w", err)
	}
	j := &job{c: h.Client, hostRunID: h.HostRunID, p4: h.P4, cur: *first}
	b := j.build()
	logger = logger.With(slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID))
	if first.Failure != "" {
		failed, err := j.Fail(ctx, b.OrganizationID, b.ID, first.Failure)
		if err != nil {
			return "", fmt.Errorf("fail the build: %w", err)
		}
		return failed.Status, nil
	}

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	beats := make(chan struct{})
	go func() {
		defer close(beats)
		h.Client.Heartbeats(runCtx, cmp.Or(h.HeartbeatEvery, DefaultHeartbeatEvery), func(reason error) {
			logger.WarnContext(runCtx, "the service ended the build: stopping it", slog.String("answer", reason.Error()))
			cancel(ErrEnded)
		}, func(err error) {
			logger.WarnContext(runCtx, "heartbeat failed", slog.String("error", err.Error()))
		})
	}()
	ag := *h.Steps
	ag.Artifacts = NewArtifactStore(h.Client, h.Concurrency)
	r := &runner.Runner{
		Store: j, Lifecycle: j, Sources: j, Logs: logWriter{h.Client}, Steps: &ag, Artifacts: ag.Artifacts,
		Engines: h.Engines, WorkDir: h.WorkDir, Logger: logger,
		TimeLimit: time.Duration(first.TimeLimitSeconds) * time.Second, MaxLogLines: first.MaxLogLines, ArtifactMax: first.ArtifactMaxBytes,
		DiskReserve: h.DiskReserve,
	}
	if first.BuildCache { // the service keeps build caches: restore the newest, save after success
		r.Caches = NewCaches(h.Client, h.Concurrency)
	}
	runErr := r.Run(runCtx, b)
	cancel(nil)
	<-beats
	switch {
	case errors.Is(context.Cause(runCtx), ErrEnded) && !b.Status.Terminal():
		return "", ErrEnded
	case runErr != nil:
		return "", runErr
	case !b.Status.Terminal():
		return "", ErrEnded // the service refused the result: the build ended otherwise
	}
	return b.Status, nil
}
