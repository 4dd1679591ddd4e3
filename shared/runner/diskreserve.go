package runner

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/kilnbuild/kiln/shared/diskspace"
	"github.com/kilnbuild/kiln/shared/wake"
)

// diskEvery is how often a running build's data volume is checked against the reserve.
const diskEvery = 3 * time.Second

// diskLow is the cause of a build's context ending when the data volume ran short; free is the
// volume's free space when it was seen.
type diskLow struct {
	reason string
	free   int64
}

func (d diskLow) Error() string { return d.reason }

// space is the data volume's (WorkDir's) free space.
func (r *Runner) space() (diskspace.Space, error) {
	of := r.freeSpace
	if of == nil {
		of = diskspace.Of
	}
	return of(r.WorkDir)
}

// lowDisk says whether the data volume (WorkDir's) has less than DiskReserve free, and the
// failure reason if so, ending with what became of the build.
func (r *Runner) lowDisk(ctx context.Context, outcome string) (string, bool) {
	if r.DiskReserve <= 0 {
		return "", false
	}
	s, err := r.space()
	if err != nil {
		r.log().WarnContext(ctx, "cannot check the data volume's free space", slog.String("error", err.Error()))
		return "", false
	}
	if s.Free >= r.DiskReserve {
		return "", false
	}
	return fmt.Sprintf("disk space: the data volume has %s free, less than KILN_DISK_RESERVE (%s); %s",
		diskspace.Format(s.Free), diskspace.Format(r.DiskReserve), outcome), true
}

// watchDisk ends the returned context with a diskLow cause as soon as the data volume has less
// than the reserve free, or would have before the next check at the pace free space fell since
// the last one, so the build stops before the database or other builds run out. What the build
// wrote is then removed (dropWorkspace; its staging directory goes anyway).
func (r *Runner) watchDisk(ctx context.Context) (context.Context, func()) {
	if r.DiskReserve <= 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	every := r.diskEvery
	if every == 0 {
		every = diskEvery
	}
	w := diskWatch{reserve: r.DiskReserve, every: every, start: -1}
	if s, err := r.space(); err == nil {
		w.start, w.last = s.Free, s.Free
	}
	watching, stopWatching := context.WithCancel(ctx)
	go wake.Every(watching, every, func(watching context.Context) bool {
		s, err := r.space()
		if err != nil {
			r.log().WarnContext(watching, "cannot check the data volume's free space", slog.String("error", err.Error()))
			return true
		}
		if reason, low := w.check(s.Free); low {
			cancel(diskLow{reason: reason, free: s.Free})
			return false
		}
		return true
	})
	return ctx, func() { stopWatching(); cancel(nil) }
}

// diskWatch is one build's watch of the data volume: its free space when the build started and
// at the last check.
type diskWatch struct {
	reserve     int64
	every       time.Duration
	start, last int64 // -1: unknown
}

// check takes the volume's free space now and says whether the build must stop, and why: the
// reason names how much free space fell while the build ran (the build's own use, with what
// other builds wrote meanwhile).
func (w *diskWatch) check(free int64) (string, bool) {
	if w.start < 0 {
		w.start, w.last = free, free
	}
	fell, pace := max(w.start-free, 0), w.last-free
	w.last = free
	const outcome = "; the build was stopped and its workspace removed"
	switch {
	case free < w.reserve:
		return fmt.Sprintf("disk space: the data volume's free space fell by %s while the build ran, to %s, less than KILN_DISK_RESERVE (%s)%s",
			diskspace.Format(fell), diskspace.Format(free), diskspace.Format(w.reserve), outcome), true
	case pace > 0 && free-pace < w.reserve:
		return fmt.Sprintf("disk space: the data volume's free space fell by %s while the build ran, to %s, %s in the last %s: "+
			"at that pace it would be less than KILN_DISK_RESERVE (%s) before the next check%s",
			diskspace.Format(fell), diskspace.Format(free), diskspace.Format(pace), w.every, diskspace.Format(w.reserve), outcome), true
	}
	return "", false
}

// logWorkspaceSize logs, in the background, the size of a workspace after a build and the data
// volume's free space, so that the operator sees which workspaces take the disk.
func (r *Runner) logWorkspaceSize(ctx context.Context, dir, orgID, projectID, branch string) {
	go func() {
		var size int64
		var files int
		_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					size += fi.Size()
					files++
				}
			}
			return nil
		})
		attrs := []any{slog.String("org_id", orgID), slog.String("project_id", projectID), slog.String("branch", branch),
			slog.String("workspace", dir), slog.Int64("bytes", size), slog.String("size", diskspace.Format(size)), slog.Int("files", files)}
		if s, err := diskspace.Of(dir); err == nil {
			attrs = append(attrs, slog.String("data_volume_free", diskspace.Format(s.Free)))
		}
		r.log().InfoContext(context.WithoutCancel(ctx), "workspace size after the build", attrs...)
	}()
}
