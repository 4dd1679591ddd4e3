package serve

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/diskspace"
	"github.com/kilnbuild/kiln/shared/sandbox/cgroup"
	"github.com/kilnbuild/kiln/shared/settings"
)

// newBuildLimits opens this machine's control groups for the builds' limits (KILN_BUILD_MEMORY,
// KILN_BUILD_PIDS, KILN_BUILD_CPU_WEIGHT) and logs which apply and which the host cannot apply,
// and why. A limit the host cannot apply does not stop the service: builds run without it.
func newBuildLimits(ctx context.Context, cfg Config, logger *slog.Logger) buildsteps.Limits {
	m := cgroup.Open(logger)
	l := cgroupLimits{m: m, l: cgroup.Limits{MemoryBytes: cfg.BuildMemory, Pids: cfg.BuildPids, CPUWeight: cfg.BuildCPUWeight}}
	set := map[string]string{cgroup.Memory: "off", cgroup.Pids: "off", cgroup.CPU: fmt.Sprint(cfg.BuildCPUWeight)}
	if cfg.BuildMemory > 0 {
		set[cgroup.Memory] = diskspace.Format(cfg.BuildMemory)
	}
	if cfg.BuildPids > 0 {
		set[cgroup.Pids] = fmt.Sprint(cfg.BuildPids)
	}
	logger.InfoContext(ctx, "build limits", slog.String("memory", set[cgroup.Memory]), slog.String("pids", set[cgroup.Pids]),
		slog.String("cpu_weight", set[cgroup.CPU]), slog.Any("applied", m.Available()))
	for _, why := range m.Unavailable() {
		c, _, _ := strings.Cut(why, ":")
		if set[c] == "off" {
			continue
		}
		logger.WarnContext(ctx, "a build limit cannot be applied on this host: builds run without it", slog.String("limit", settingOf[c]), slog.String("why", why))
	}
	return l
}

// settingOf names the setting of each limit.
var settingOf = map[string]string{cgroup.Memory: settings.BuildMemory.Name, cgroup.Pids: settings.BuildPids.Name, cgroup.CPU: settings.BuildCPUWeight.Name}

// cgroupLimits gives each build a control group of its own.
type cgroupLimits struct {
	m *cgroup.Manager
	l cgroup.Limits
}

func (c cgroupLimits) Group(name string) (buildsteps.LimitGroup, error) {
	g, err := c.m.New(name, c.l)
	if err != nil {
		return nil, err
	}
	return limitGroup{g, c.l}, nil
}

type limitGroup struct {
	*cgroup.Group
	l cgroup.Limits
}

// Exceeded says which limit stopped the build, naming its setting.
func (g limitGroup) Exceeded() string {
	switch {
	case g.MemoryExceeded():
		return fmt.Sprintf("memory limit: the build used more than KILN_BUILD_MEMORY (%s) and was stopped", diskspace.Format(g.l.MemoryBytes))
	case g.PidsExceeded():
		return fmt.Sprintf("process limit: the build tried to run more than KILN_BUILD_PIDS (%d) processes and threads at once", g.l.Pids)
	}
	return ""
}

// diskReserveOf is the data volume's reserve in bytes (KILN_DISK_RESERVE), logged with the
// volume's free space.
func diskReserveOf(ctx context.Context, cfg Config, logger *slog.Logger) (int64, error) {
	n, err := cfg.DiskReserve.of(cfg.Data)
	if err != nil {
		return 0, err
	}
	attrs := []any{slog.String("reserve", diskspace.Format(n)), slog.String("setting", cfg.DiskReserve.String())}
	if s, err := diskspace.Of(cfg.Data); err == nil {
		attrs = append(attrs, slog.String("free", diskspace.Format(s.Free)), slog.String("volume", diskspace.Format(s.Total)))
		if s.Free < n {
			logger.WarnContext(ctx, "the data volume has less free space than KILN_DISK_RESERVE: builds fail until there is more", attrs...)
			return n, nil
		}
	}
	logger.InfoContext(ctx, "disk reserve (KILN_DISK_RESERVE): builds stop before the data volume's free space falls below it", attrs...)
	return n, nil
}
