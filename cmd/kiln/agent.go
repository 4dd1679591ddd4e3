package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/kilnbuild/kiln/shared/agent"
	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
	"github.com/kilnbuild/kiln/shared/sandbox"
)

// errBuildFailed ends `kiln agent run` with exit status 1: the build ran and failed (or the
// service ended it).
var errBuildFailed = errors.New("the build did not complete")

// agentCmd runs `kiln agent run`: the one build of a build host launched for it (a CodeBuild
// container), from its environment:
//
//	KILN_HOST_URL, KILN_HOST_CREDENTIAL  the service and the build's host credential (required)
//	KILN_TASK_TOKEN                      the Step Functions task token, sent with each heartbeat (AWS)
//	KILN_ENGINES                         the engines directory, as kiln serve (default ./engines)
//	KILN_HOST_WORKDIR                    workspaces and staging (default: a new temporary directory)
//	KILN_SANDBOX                         off (default) or bwrap; KILN_BWRAP is the bwrap binary
//	KILN_P4                              the p4 client, for Perforce projects (default p4)
//	CODEBUILD_BUILD_ID                   reported to the service so that a cancel stops the container
//
// KILN_SANDBOX defaults to off here, unlike kiln serve: a build host holds one build of one
// organization and is thrown away with it, so nothing on it belongs to anyone else, and the
// engine gets no KILN_* variables (the credential). bwrap still confines the build from the
// host's own files where the container allows user namespaces.
func agentCmd(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "run" {
		return agentLoopCmd(ctx, args, getenv, stderr)
	}
	if len(args) != 1 {
		return errors.New("usage: kiln agent run (settings come from the environment; see docs/hosts.md)")
	}
	url, cred := getenv(agentapi.EnvHostURL), getenv(agentapi.EnvHostCredential)
	if url == "" || cred == "" {
		return fmt.Errorf("%s and %s must be set", agentapi.EnvHostURL, agentapi.EnvHostCredential)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	work, cleanup, err := hostWorkDir(getenv("KILN_HOST_WORKDIR"), "kiln-host-")
	if err != nil {
		return err
	}
	defer cleanup()
	confiner, err := hostSandbox(ctx, runtime.GOOS, getenv, logger)
	if err != nil {
		return err
	}
	host := &hostclient.Host{
		Client:    &hostclient.Client{BaseURL: url, Credential: cred, TaskToken: getenv(agentapi.EnvTaskToken)},
		HostRunID: getenv("CODEBUILD_BUILD_ID"),
		Engines:   engines.Dir{Path: cmp.Or(getenv("KILN_ENGINES"), "./engines")},
		Agent:     &agent.Agent{Logger: logger, Sandbox: confiner},
		P4:        p4Verifier(getenv, work),
		WorkDir:   work,
		Logger:    logger,
	}
	status, err := host.Run(ctx)
	if err != nil {
		if errors.Is(err, hostclient.ErrEnded) {
			return fmt.Errorf("%w: %w", errBuildFailed, err)
		}
		return err
	}
	logger.Info("the build ended", slog.String("status", string(status)))
	if status != kiln.StatusComplete {
		return errBuildFailed
	}
	return nil
}

// hostWorkDir is the host's workspaces and staging: dir when given, else a new temporary
// directory (named with prefix) that cleanup removes.
func hostWorkDir(dir, prefix string) (work string, cleanup func(), err error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}

// p4Verifier checks Perforce sources with KILN_P4 (default p4), its client files under work.
func p4Verifier(getenv func(string) string, work string) *perforce.Verifier {
	return &perforce.Verifier{P4: cmp.Or(getenv("KILN_P4"), "p4"), Dir: filepath.Join(work, "p4"), Timeout: 30 * time.Second}
}

// hostSandbox is what confines a build host's builds on goos, said in its start log. KILN_SANDBOX=bwrap
// fails at start where bubblewrap cannot run (anything but Linux: a Windows agent runs its
// builds unconfined, and says so).
func hostSandbox(ctx context.Context, goos string, getenv func(string) string, logger *slog.Logger) (sandbox.Confiner, error) {
	switch v := cmp.Or(getenv("KILN_SANDBOX"), "off"); v {
	case "off":
		logger.Warn("builds run without a sandbox (KILN_SANDBOX=off): the engine and the project's build rules run as this agent's user " +
			"and can read what it can; give the agent a user of its own")
		return sandbox.Unconfined{}, nil
	case "bwrap":
		if err := sandbox.Supported(goos); err != nil {
			return nil, fmt.Errorf("KILN_SANDBOX=bwrap: %w", err)
		}
		c, err := sandbox.Open(ctx, sandbox.Bubblewrap{Path: getenv("KILN_BWRAP")})
		if err == nil {
			logger.Info("builds run in a bubblewrap sandbox")
		}
		return c, err
	default:
		return nil, fmt.Errorf("KILN_SANDBOX: %q is neither off nor bwrap", v)
	}
}
