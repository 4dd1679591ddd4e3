package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/settings"
)

// agentLoopCmd runs `kiln agent`: a studio's machine that claims its organization's builds of
// its pool and runs them one at a time, until SIGTERM or SIGINT (the build running then is
// failed as interrupted). Flags override the environment:
//
//	--url KILN_AGENT_URL              the service's base URL (required)
//	--token KILN_AGENT_TOKEN          the agent's token (required, or a file: never printed)
//	--token-file KILN_AGENT_TOKEN_FILE  a file holding the token (mode 0600; - reads standard
//	                                  input): the token is then never in the agent's environment
//	--pool KILN_AGENT_POOL            the pool the token was made for (checked by the service)
//	--engines KILN_AGENT_ENGINES      the engines directory (default ./engines): one engine per version
//	--platforms KILN_AGENT_PLATFORMS  comma-separated platforms (default: this machine's)
//	--workdir KILN_AGENT_WORKDIR      workspaces and staging (default: a new temporary directory)
//	--ec2-host KILN_AGENT_EC2=1       one of kiln's hosted EC2 hosts (what the Windows AMI's service
//	                                  and the Linux hosts' systemd unit run): no token; it waits
//	                                  until the instance is in service, claims with its instance
//	                                  identity, runs one build and exits
//	--imds KILN_AGENT_IMDS            the instance metadata service (default http://169.254.169.254)
//
// In --ec2-host mode --url defaults to KILN_HOST_URL (the launch template's user data sets it),
// --platforms is one platform kiln hosts (Win64 or Linux; default this machine's) and the pool
// is kiln's hosted pool of that platform. KILN_SANDBOX is bwrap by default on Linux (a missing bubblewrap stops
// the agent at start; off runs builds unconfined, with a warning), account on Windows (builds run
// as the local account KILN_BUILD_ACCOUNT, default kiln-build; an agent that cannot manage it
// stops at start) but off with --ec2-host, and off elsewhere; KILN_BWRAP, KILN_SANDBOX_NETWORK,
// KILN_SANDBOX_READONLY, KILN_SANDBOX_ENV, KILN_P4 and KILN_OUTBOUND_ALLOW (a Perforce server's
// address) are read as for kiln serve, and so are the builds' limits: KILN_BUILD_MEMORY,
// KILN_BUILD_PIDS, KILN_BUILD_CPU_WEIGHT and KILN_DISK_RESERVE (on the volume of --workdir), with
// kiln serve's defaults for one build at a time (with --ec2-host the disk reserve only: an
// instance of its own, thrown away after its build, is its bound).
func agentLoopCmd(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("kiln agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", settings.AgentURL.Get(getenv), "the service's base URL")
	token := fs.String("token", settings.AgentToken.Get(getenv), "the agent's token (prefer --token-file: flags show in process lists, the environment in /proc)")
	tokenFile := fs.String("token-file", settings.AgentTokenFile.Get(getenv), "a file holding the agent's token, readable by its owner only; - reads standard input")
	pool := fs.String("pool", settings.AgentPool.Get(getenv), "the agent's pool, as created")
	enginesDir := fs.String("engines", settings.AgentEngines.Get(getenv), "the engines directory")
	platforms := fs.String("platforms", cmp.Or(settings.AgentPlatforms.Get(getenv), defaultPlatform()), "comma-separated platforms this machine builds")
	workdir := fs.String("workdir", settings.AgentWorkdir.Get(getenv), "workspaces and staging (default: a temporary directory)")
	ec2Host := fs.Bool("ec2-host", settings.AgentEC2.Get(getenv) == "1", "run as one of kiln's hosted EC2 hosts (no token; one build)")
	imds := fs.String("imds", settings.AgentIMDS.Get(getenv), "the instance metadata service (--ec2-host)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("kiln agent takes flags only, not %q", fs.Arg(0))
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	hide(logger)
	var err error
	if *token, err = secretSetting(*token, *tokenFile, "--token (KILN_AGENT_TOKEN)", "--token-file (KILN_AGENT_TOKEN_FILE)", os.Stdin); err != nil {
		return fmt.Errorf("kiln agent: %w", err)
	}
	if *ec2Host {
		*url = cmp.Or(*url, settings.HostURL.Get(getenv))
		if p := commaSplit(*platforms); len(p) != 1 || kiln.HostedPool(kiln.Platform(p[0])) == "" {
			return fmt.Errorf("kiln agent --ec2-host: --platforms (KILN_AGENT_PLATFORMS) is one platform of kiln's hosted hosts, Win64 or Linux, not %q", *platforms)
		}
		if *url == "" || *token != "" {
			return errors.New("kiln agent --ec2-host: --url (or KILN_HOST_URL) is required, and no token: the host claims with its instance identity")
		}
	} else if *url == "" || *token == "" {
		return errors.New("kiln agent: --url and --token or --token-file (or KILN_AGENT_URL and KILN_AGENT_TOKEN_FILE or KILN_AGENT_TOKEN) are required")
	}
	dir := engines.Dir{Path: *enginesDir}
	versions, err := dir.Versions(ctx)
	if err != nil {
		return fmt.Errorf("read the engines in %s: %w", *enginesDir, err)
	}
	if len(versions) == 0 {
		return fmt.Errorf("no engine in %s: install one per version (%s/5.4/%s)", *enginesDir, *enginesDir, engines.RunUATPath)
	}
	work, cleanup, err := hostWorkDir(*workdir, "kiln-agent-")
	if err != nil {
		return err
	}
	defer cleanup()
	confiner, err := hostSandbox(ctx, runtime.GOOS, loopSandboxDefault(runtime.GOOS, *ec2Host), getenv, logger, work)
	if err != nil {
		return err
	}
	if c, ok := confiner.(io.Closer); ok {
		defer c.Close() // the build account's logon
	}
	p4, err := p4Verifier(getenv, work)
	if err != nil {
		return err
	}
	limits, err := serve.OpenAgentLimits(ctx, getenv, work, !*ec2Host, logger) // a hosted EC2 host is its own bound
	if err != nil {
		return fmt.Errorf("kiln agent: %w", err)
	}
	var identity *hostedhosts.Identity
	if *ec2Host {
		id, err := ec2Identity(ctx, *imds, logger)
		if err != nil {
			return err
		}
		identity, *pool = &id, kiln.HostedPool(kiln.Platform(strings.TrimSpace(*platforms)))
	}
	loop := &hostclient.AgentLoop{
		URL: *url, Token: *token, Identity: identity, Pool: *pool, Platforms: commaSplit(*platforms), EngineVersions: versions, Logger: logger,
		NewHost: func(c *hostclient.Client) *hostclient.Host {
			return &hostclient.Host{
				Client: c, Engines: dir, Steps: &buildsteps.Steps{Logger: logger, Sandbox: confiner, Limits: limits.Steps},
				P4: p4, WorkDir: work, DiskReserve: limits.DiskReserve, Logger: logger,
			}
		},
	}
	logger.Info("kiln agent claiming builds", slog.String("url", *url), slog.String("pool", *pool),
		slog.String("platforms", *platforms), slog.String("engines", strings.Join(versions, ",")))
	return loop.Run(ctx)
}

// inServiceEvery is how often a hosted host asks whether it is in service yet.
const inServiceEvery = 5 * time.Second

// ec2Identity waits until the instance is in service in its group (a warm pool instance
// warming up is not), then reads its identity.
func ec2Identity(ctx context.Context, imds string, logger *slog.Logger) (hostedhosts.Identity, error) {
	for {
		state, err := hostedhosts.LifecycleState(ctx, nil, imds)
		if err == nil && state == hostedhosts.StateInService {
			break
		}
		if err != nil {
			logger.Warn("read the instance's lifecycle state", slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return hostedhosts.Identity{}, ctx.Err()
		case <-time.After(inServiceEvery):
		}
	}
	id, err := hostedhosts.FetchIdentity(ctx, nil, imds)
	if err != nil {
		return id, fmt.Errorf("kiln agent --ec2-host: %w", err)
	}
	return id, nil
}

// defaultPlatform is the platform of this machine's own operating system.
func defaultPlatform() string {
	switch runtime.GOOS {
	case "windows":
		return "Win64"
	case "darwin":
		return "Mac"
	default:
		return "Linux"
	}
}

func commaSplit(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
