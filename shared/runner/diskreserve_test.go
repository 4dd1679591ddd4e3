package runner

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/diskspace"
)

func TestWatchDiskStopsTheBuildBeforeTheReserve(t *testing.T) {
	for _, tc := range []struct {
		name       string
		free       []int64 // successive answers, the first when the watch starts; the last repeats
		wantReason string
	}{
		{"plenty all along", []int64{10 << 30}, ""},
		{"writes and stops writing above the reserve", []int64{10 << 30, 8 << 30, 7 << 30}, ""},
		{"falls below the reserve", []int64{10 << 30, 10 << 30, 8 << 30, 1 << 29},
			"disk space: the data volume's free space fell by 9.5 GiB while the build ran, to 512 MiB, less than KILN_DISK_RESERVE (2 GiB); " +
				"the build was stopped and its workspace removed"},
		{"would fall below the reserve before the next check", []int64{10 << 30, 10 << 30, 5 << 30},
			"disk space: the data volume's free space fell by 5 GiB while the build ran, to 5 GiB, 5 GiB in the last 5ms: " +
				"at that pace it would be less than KILN_DISK_RESERVE (2 GiB) before the next check; the build was stopped and its workspace removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			r := &Runner{DiskReserve: 2 << 30, WorkDir: t.TempDir(), diskEvery: 5 * time.Millisecond,
				freeSpace: func(string) (diskspace.Space, error) {
					i := min(int(calls.Add(1))-1, len(tc.free)-1)
					return diskspace.Space{Free: tc.free[i], Total: 100 << 30}, nil
				}}
			ctx, stop := r.watchDisk(context.Background())
			defer stop()
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			var low diskLow
			errors.As(context.Cause(ctx), &low)
			if low.reason != tc.wantReason {
				t.Fatalf("cause %v, want reason %q", context.Cause(ctx), tc.wantReason)
			}
		})
	}
}
