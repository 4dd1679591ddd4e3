//go:build unix

package runner

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// KillOrphans stops the build processes a previous run of this service left behind when it died
// without stopping them (a SIGKILL, a power cut of the process): each build's sandbox, or its
// engine process when builds run unconfined, names the build's staging directory on its command
// line. One service at a time uses a data directory, so every such process is an orphan. It
// returns how many process groups it stopped. Only Linux has /proc; elsewhere it does nothing
// (Windows: orphans_windows.go).
func (r *Runner) KillOrphans(ctx context.Context) int {
	root, err := filepath.Abs(filepath.Join(r.WorkDir, "staging"))
	if err != nil {
		return 0
	}
	marker := []byte(root + string(filepath.Separator))
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self, selfGroup := os.Getpid(), syscall.Getpgrp()
	killed := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, marker) {
			continue
		}
		pgid, err := syscall.Getpgid(pid)
		if err != nil || pgid == selfGroup || killed[pgid] {
			continue
		}
		// The whole group: a sandbox's init (its namespace goes with it), or the engine and its
		// workers.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		killed[pgid] = true
		r.log().WarnContext(ctx, "stopped a build process left running by a previous run of the service",
			slog.Int("pid", pid), slog.Int("pgid", pgid))
	}
	return len(killed)
}
