package runner

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/kilnbuild/kiln/shared/diskspace"
)

// diskEvery is how often a running build's data volume is checked against the reserve.
const diskEvery = 3 * time.Second

// diskLow is the cause of a build's context ending when the data volume ran short.
type diskLow struct{ reason string }

func (d diskLow) Error() string { return d.reason }

// lowDisk says whether the data volume (WorkDir's) has less than DiskReserve free, and the
// failure reason if so, ending with what became of the build.
func (r *Runner) lowDisk(ctx context.Context, outcome string) (string, bool) {
	if r.DiskReserve <= 0 {
		return "", false
	}
	of := r.freeSpace
	if of == nil {
		of = diskspace.Of
	}
	s, err := of(r.WorkDir)
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
// than the reserve free, so the build stops before the database or other builds run out.
func (r *Runner) watchDisk(ctx context.Context) (context.Context, func()) {
	if r.DiskReserve <= 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	every := r.diskEvery
	if every == 0 {
		every = diskEvery
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-t.C:
				if reason, low := r.lowDisk(ctx, "the build was stopped"); low {
					cancel(diskLow{reason})
					return
				}
			}
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
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
