package serve

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"

	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/settings"
)

// AgentLimitSettings are the settings of the builds' limits that `kiln agent` reads as kiln serve
// does: the same names, defaults and meaning, for one build at a time.
var AgentLimitSettings = []string{settings.BuildMemory.Name, settings.BuildPids.Name, settings.BuildCPUWeight.Name, settings.DiskReserve.Name}

// AgentLimits are the limits of an agent's builds.
type AgentLimits struct {
	// Steps limits each build's engine step (a control group of its own; memory, processes, CPU).
	Steps buildsteps.Limits
	// DiskReserve is the free space kept on the volume of the agent's work directory, in bytes:
	// a build does not start with less free, and is stopped before free space falls below it.
	DiskReserve int64
}

// OpenAgentLimits reads the limit settings of `kiln agent` (AgentLimitSettings, through getenv)
// and opens them on this machine, the disk reserve on the volume of work, logging which apply
// as kiln serve does. KILN_BUILD_MEMORY's auto is 90% of the machine's memory: the agent runs one
// build at a time. With groups false only the disk reserve is opened: a hosted build host
// (`kiln agent run` in a CodeBuild container or on an EC2 instance of its own) is itself the
// build's bound, and has no control group delegated to it. A setting that does not parse is an
// error naming it.
func OpenAgentLimits(ctx context.Context, getenv func(string) string, work string, groups bool, logger *slog.Logger) (AgentLimits, error) {
	cfg := Config{Workers: 1, Data: work}
	for _, s := range serveSettings {
		if !slices.Contains(AgentLimitSettings, s.env) {
			continue
		}
		if err := s.apply(&cfg, s.row.Get(getenv)); err != nil {
			return AgentLimits{}, fmt.Errorf("%s: %w", s.env, err)
		}
	}
	if err := os.MkdirAll(work, 0o700); err != nil { // its volume is measured: it must exist
		return AgentLimits{}, fmt.Errorf("work directory: %w", err)
	}
	reserve, err := diskReserveOf(ctx, cfg, logger)
	if err != nil {
		return AgentLimits{}, err
	}
	if !groups {
		return AgentLimits{DiskReserve: reserve}, nil
	}
	return AgentLimits{Steps: newBuildLimits(ctx, cfg, logger), DiskReserve: reserve}, nil
}
