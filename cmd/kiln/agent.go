package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
	"github.com/kilnbuild/kiln/shared/settings"
)

// errBuildFailed ends `kiln agent run` with exit status 1: the build ran and failed (or the
// service ended it).
var errBuildFailed = errors.New("the build did not complete")

// agentCmd runs `kiln agent run`: the one build of a build host launched for it (a CodeBuild
// container), from its environment:
//
//	KILN_HOST_URL, KILN_HOST_CREDENTIAL  the service and the build's host credential (required)
//	KILN_HOST_CREDENTIAL_FILE            a file holding the credential instead (mode 0600; - reads standard input)
//	KILN_TASK_TOKEN                      the Step Functions task token, sent with each heartbeat (AWS)
//	KILN_ENGINES                         the engines directory, as kiln serve (default ./engines)
//	KILN_HOST_WORKDIR                    workspaces and staging (default: a new temporary directory)
//	KILN_SANDBOX                         off (default), bwrap (Linux) or account (Windows); KILN_BWRAP is the bwrap binary
//	KILN_P4                              the p4 client, for Perforce projects (default p4)
//	KILN_OUTBOUND_ALLOW                  CIDR ranges a Perforce server may be in although not public
//	KILN_DISK_RESERVE                    the work directory's disk reserve, as kiln serve's (see
//	                                     docs/sandbox.md); the memory and process bounds of a hosted
//	                                     build are its container's or instance's own
//	CODEBUILD_BUILD_ID                   reported to the service so that a cancel stops the container
//
// KILN_SANDBOX defaults to off here, unlike kiln serve and kiln agent on Linux: a build host
// holds one build of one organization and is thrown away with it, so nothing on it belongs to
// anyone else, CodeBuild's containers usually cannot make user namespaces, and the engine gets
// no KILN_* variables (the credential). On Linux the host is not dumpable (hideProcess), so a
// build running as the same non-root user cannot read the credential from kiln's environment or
// memory either (in CodeBuild builds run as root, which can, but the credential is its own build's).
// bwrap still confines the build from the host's own files where the container allows user
// namespaces.
func agentCmd(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "run" {
		return agentLoopCmd(ctx, args, getenv, stderr)
	}
	if len(args) != 1 {
		return errors.New("usage: kiln agent run (settings come from the environment; see docs/hosts.md)")
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	hide(logger)
	url := settings.HostURL.Get(getenv)
	cred, err := secretSetting(settings.HostCredential.Get(getenv), settings.HostCredentialFile.Get(getenv),
		agentapi.EnvHostCredential, envHostCredentialFile, os.Stdin)
	if err != nil {
		return err
	}
	if url == "" || cred == "" {
		return fmt.Errorf("%s and %s (or %s) must be set", agentapi.EnvHostURL, agentapi.EnvHostCredential, envHostCredentialFile)
	}
	work, cleanup, err := hostWorkDir(settings.HostWorkdir.Get(getenv), "kiln-host-")
	if err != nil {
		return err
	}
	defer cleanup()
	confiner, err := hostSandbox(ctx, runtime.GOOS, sandboxOff, getenv, logger, work)
	if err != nil {
		return err
	}
	if c, ok := confiner.(io.Closer); ok {
		defer c.Close()
	}
	p4, err := p4Verifier(getenv, work)
	if err != nil {
		return err
	}
	limits, err := serve.OpenAgentLimits(ctx, getenv, work, false, logger)
	if err != nil {
		return fmt.Errorf("kiln agent run: %w", err)
	}
	host := &hostclient.Host{
		Client:      &hostclient.Client{BaseURL: url, Credential: cred, TaskToken: settings.TaskToken.Get(getenv)},
		HostRunID:   getenv("CODEBUILD_BUILD_ID"),
		Engines:     engines.Dir{Path: settings.Engines.Get(getenv)},
		Steps:       &buildsteps.Steps{Logger: logger, Sandbox: confiner, Limits: limits.Steps},
		P4:          p4,
		WorkDir:     work,
		DiskReserve: limits.DiskReserve,
		Logger:      logger,
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

// p4Verifier checks Perforce sources with KILN_P4 (default p4), its client files under work. The
// server's address must be public, or inside KILN_OUTBOUND_ALLOW, as kiln serve and the API
// checked it when the credentials were saved.
func p4Verifier(getenv func(string) string, work string) (*perforce.Verifier, error) {
	allow, err := settings.OutboundAllow.Read(getenv)
	if err != nil {
		return nil, err
	}
	return &perforce.Verifier{P4: settings.P4.Get(getenv), Dir: filepath.Join(work, "p4"), Allow: allow, Timeout: 30 * time.Second}, nil
}

// envHostCredentialFile names a file that holds the build's host credential, in place of
// KILN_HOST_CREDENTIAL: the credential is then never in the host's environment.
var envHostCredentialFile = settings.HostCredentialFile.Name

// hide makes this agent's process unreadable to its builds where the system allows it (Linux:
// not dumpable), and says so when it cannot.
func hide(logger *slog.Logger) {
	if err := hideProcess(); err != nil {
		logger.Warn("could not make the agent's process unreadable to its builds", slog.String("error", err.Error()))
	}
}
