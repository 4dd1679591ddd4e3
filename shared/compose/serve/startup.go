package serve

import (
	"context"
	"log/slog"
	"os/exec"

	"github.com/kilnbuild/kiln/shared/engines"
)

// reportStartup logs, once at start, what the operator should know about the machine: the
// engines found and where, engine directories that cannot be used and why, and a missing
// Perforce client.
func reportStartup(ctx context.Context, cfg Config, logger *slog.Logger) {
	found, problems, err := engines.Dir{Path: cfg.Engines}.Scan(ctx)
	if err != nil {
		logger.WarnContext(ctx, "cannot list the engines (KILN_ENGINES)", slog.String("error", err.Error()))
	}
	for _, in := range found {
		logger.InfoContext(ctx, "engine found", slog.String("version", in.Version), slog.String("run_uat", in.RunUAT))
	}
	for _, p := range problems {
		logger.WarnContext(ctx, "engine directory not usable (KILN_ENGINES)", slog.String("path", p.Path), slog.String("problem", p.Reason))
	}
	if len(found) == 0 {
		logger.WarnContext(ctx, "no engine installed: every build setting is refused with engine_not_found until one is (KILN_ENGINES/<version>/"+engines.RunUATPath+")",
			slog.String("engines", cfg.Engines))
	}
	if _, err := exec.LookPath(cfg.P4); err != nil {
		logger.WarnContext(ctx, "no Perforce client (KILN_P4): saving Perforce credentials answers 503 until one is installed",
			slog.String("p4", cfg.P4), slog.String("error", err.Error()))
	}
}
