package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"

	"github.com/kilnbuild/kiln/shared/engines"
)

// reportStartup logs, once at start, what the operator should know about the machine: the
// engines found and where, engine directories that cannot be used and why, and a missing
// Perforce client. It answers how many engines it found.
func reportStartup(ctx context.Context, cfg Config, logger *slog.Logger) int {
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
	return len(found)
}

// readiness is what a person who just started kiln serve needs to see on its standard output:
// where the web console is, and what this kiln lacks before it can build.
type readiness struct {
	consoleURL string
	engines    int  // engines found in cfg.Engines
	gitHub     bool // a GitHub App is configured
	signUp     bool // GitHub sign-in is open (KILN_SIGNUP=github)
	enginesDir string
}

// print writes the console's URL, then each missing piece with what to do, then the way to try
// kiln without them (make demo).
func (r readiness) print(w io.Writer) {
	how := "sign in with the owner's API token"
	if r.signUp {
		how = "sign in with GitHub, or with an API token"
	}
	fmt.Fprintf(w, "kiln: the web console is at %s (%s)\n", r.consoleURL, how)
	var missing []string
	if r.engines == 0 {
		missing = append(missing, fmt.Sprintf("no Unreal Engine in %s (KILN_ENGINES): install one as %s/<version>/ (with %s), or run kiln agent on a build machine (docs/agents.md)",
			r.enginesDir, r.enginesDir, engines.RunUATPath))
	}
	if !r.gitHub {
		missing = append(missing, "no GitHub App (KILN_GITHUB_APP_ID, KILN_GITHUB_APP_KEY): projects come from Perforce only (docs/perforce.md) until one is set")
	}
	if len(missing) == 0 {
		return
	}
	fmt.Fprintf(w, "kiln: before this kiln can build:\n  - %s\n", strings.Join(missing, "\n  - "))
	fmt.Fprintf(w, "kiln: to try everything now, with a fake GitHub and a stand-in engine: make demo (README.md, \"A project from GitHub\")\n")
}
