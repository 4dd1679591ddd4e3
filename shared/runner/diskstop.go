package runner

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/kilnbuild/kiln/shared/diskspace"
)

// dropWorkspace removes the workspace of a build the disk watch stopped (ctx ended with a
// diskLow cause), and its cache marker beside it, so that the volume does not stay full because
// of it and the next build of the branch checks out afresh. os.RemoveAll removes a symbolic link
// the build left, never what it points to. It logs how much free space came back since the stop
// (the staging directory, removed first, included). It does nothing for a build stopped otherwise.
func (r *Runner) dropWorkspace(ctx context.Context, workspace string, attrs ...any) {
	var low diskLow
	if !errors.As(context.Cause(ctx), &low) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	attrs = append(attrs, slog.String("workspace", workspace))
	for _, p := range []string{workspace, workspace + ".cache"} {
		if err := os.RemoveAll(p); err != nil {
			r.log().ErrorContext(ctx, "remove what a build stopped for disk space wrote", append(attrs, slog.String("error", err.Error()))...)
			return
		}
	}
	if s, err := r.space(); err == nil {
		freed := max(s.Free-low.free, 0)
		attrs = append(attrs, slog.Int64("freed_bytes", freed), slog.String("freed", diskspace.Format(freed)),
			slog.String("data_volume_free", diskspace.Format(s.Free)))
	}
	r.log().WarnContext(ctx, "removed the workspace and staging of a build stopped for disk space", attrs...)
}
