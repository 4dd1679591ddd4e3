package builds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/manifest"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/wake"
)

// Janitor deletes artifacts older than the retention period, and the logs of builds created
// before it; their builds stay, and their download answers 404 from then on. It also removes the
// build caches of deleted projects.
type Janitor struct {
	Store     store.Artifacts
	Artifacts artifacts.Store
	// Logs deletes the logs past the retention (nil: the log store expires them itself, as
	// DynamoDB's time to live does).
	Logs interface {
		DeleteExpired(ctx context.Context) (int, error)
	}
	// Caches and Projects, when both are set, make each sweep also remove the build caches of
	// projects that no longer exist.
	Caches    ProjectCaches
	Projects  ProjectGetter
	Retention time.Duration
	Logger    *slog.Logger
	Now       func() time.Time
	// Every is how often it looks (default an hour).
	Every time.Duration
}

// Run sweeps until ctx ends.
func (j *Janitor) Run(ctx context.Context) {
	every := j.Every
	if every <= 0 {
		every = time.Hour
	}
	sweep := func(ctx context.Context) bool {
		if _, err := j.Sweep(ctx); err != nil {
			j.Logger.ErrorContext(ctx, "artifact retention", slog.String("error", err.Error()))
		}
		return true
	}
	sweep(ctx)
	wake.Every(ctx, every, sweep)
}

// Sweep deletes every artifact created before now − retention: the file (and its manifest) first, then its record
// (a crash in between leaves a record whose download is 404, swept again next time).
func (j *Janitor) Sweep(ctx context.Context) (deleted int, err error) {
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	cutoff := now().Add(-j.Retention)
	seen := map[string]bool{} // an index may lag behind deletes for a moment
	for {
		old, err := j.Store.ArtifactsCreatedBefore(ctx, cutoff, 100)
		if err != nil {
			return deleted, err
		}
		progress := false
		for _, a := range old {
			if seen[a.OrganizationID+"/"+a.BuildID] {
				continue
			}
			seen[a.OrganizationID+"/"+a.BuildID] = true
			progress = true
			for _, key := range []string{manifest.Key(a.Key), a.Key} { // the size report goes with it
				if err := j.Artifacts.Delete(ctx, key); err != nil {
					return deleted, err
				}
			}
			if err := j.Store.DeleteArtifact(ctx, a.OrganizationID, a.BuildID); err != nil && !kiln.IsCode(err, kiln.ENotFound) {
				return deleted, err
			}
			deleted++
		}
		if !progress {
			return deleted, errors.Join(j.deleteLogs(ctx), j.sweepCaches(ctx))
		}
	}
}

// deleteLogs deletes the logs past their retention, if the janitor has a log store to sweep.
func (j *Janitor) deleteLogs(ctx context.Context) error {
	if j.Logs == nil {
		return nil
	}
	n, err := j.Logs.DeleteExpired(ctx)
	if n > 0 && j.Logger != nil {
		j.Logger.InfoContext(ctx, "build logs past retention deleted", slog.Int("logs", n))
	}
	if err != nil {
		return fmt.Errorf("log retention: %w", err)
	}
	return nil
}
