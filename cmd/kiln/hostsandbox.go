package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/kilnbuild/kiln/shared/sandbox"
	"github.com/kilnbuild/kiln/shared/settings"
)

// Sandbox modes of KILN_SANDBOX.
const (
	sandboxOff   = "off"
	sandboxBwrap = "bwrap"
	// sandboxAccount runs builds as a local low-privilege account of their own (Windows).
	sandboxAccount = "account"
)

// loopSandboxDefault is KILN_SANDBOX's default for `kiln agent` on goos: bwrap on Linux, where a
// studio's long-running agent runs builds of every project of its organization's pool one after
// another, and each build must not reach the agent's token (which claims the pool's other builds)
// nor the agent's files; account on Windows, for the same reason, but off on one of kiln's hosted
// EC2 hosts (ec2Host), which holds no token, runs one build and is thrown away with it; off
// elsewhere (macOS), where kiln has no sandbox.
func loopSandboxDefault(goos string, ec2Host bool) string {
	switch {
	case goos == "linux":
		return sandboxBwrap
	case goos == "windows" && !ec2Host:
		return sandboxAccount
	}
	return sandboxOff
}

// hostSandbox is what confines an agent's builds on goos, said in its start log: KILN_SANDBOX,
// or def when it is unset. bwrap fails at start where bubblewrap cannot run (anything but Linux,
// a missing bwrap, a kernel or container without user namespaces), with the fix; off runs builds
// unconfined and warns. KILN_BWRAP, KILN_SANDBOX_NETWORK, KILN_SANDBOX_READONLY and
// KILN_SANDBOX_ENV shape the sandbox as for kiln serve. account (Windows) runs builds as the local
// account KILN_BUILD_ACCOUNT and makes work, the agent's work directory, the agent's only; it
// fails at start where the agent cannot manage that account (not a service as LocalSystem).
func hostSandbox(ctx context.Context, goos, def string, getenv func(string) string, logger *slog.Logger, work string) (sandbox.Confiner, error) {
	switch v := cmp.Or(getenv(settings.Sandbox.Name), def); v {
	case sandboxOff:
		logger.Warn("builds run without a sandbox (KILN_SANDBOX=off): the engine and the project's build rules run as this agent's user " +
			"and can read what it can; give the agent a user of its own, and its token in a file (see docs/agents.md)")
		return sandbox.Unconfined{}, nil
	case sandboxBwrap:
		if err := sandbox.Supported(goos); err != nil {
			if goos == "windows" {
				return nil, fmt.Errorf("KILN_SANDBOX=bwrap: %w; kiln agent confines Windows builds with KILN_SANDBOX=account, its default there", err)
			}
			return nil, fmt.Errorf("KILN_SANDBOX=bwrap: %w", err)
		}
		b, err := bubblewrapSettings(getenv)
		if err != nil {
			return nil, err
		}
		c, err := sandbox.Open(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("builds run in a bubblewrap sandbox (KILN_SANDBOX=bwrap, the default of kiln agent on Linux), "+
				"which cannot run here: %w; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; KILN_BWRAP names "+
				"its binary), or set KILN_SANDBOX=off to run builds unconfined as this agent's user", err)
		}
		if b.Network == sandbox.NetworkHost {
			logger.Warn("KILN_SANDBOX_NETWORK=host: builds share this machine's network and reach its loopback services, " +
				"the private network and, on a cloud VM, the metadata service with the VM's credentials")
		}
		logger.Info("builds run in a bubblewrap sandbox", slog.String("network", string(cmp.Or(b.Network, sandbox.NetworkNone))))
		return c, nil
	case sandboxAccount:
		a, err := accountSettings(goos, getenv)
		if err != nil {
			return nil, err
		}
		a.Private = []string{work}
		c, err := sandbox.OpenAccount(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("builds run as the local account %s (KILN_SANDBOX=account, the default of kiln agent on Windows), "+
				"which this agent cannot set up: %w; run kiln agent as a Windows service as LocalSystem (docs/agents.md), or set "+
				"KILN_SANDBOX=off to run builds unconfined as this agent's account", a.Name, err)
		}
		logger.Warn("builds share this machine's network (KILN_SANDBOX=account cannot cut it): they reach its loopback services, " +
			"the private network and, on a cloud VM, the metadata service")
		logger.Info("builds run as a local account of their own", slog.String("account", a.Name))
		return c, nil
	default:
		return nil, fmt.Errorf("KILN_SANDBOX: %q is neither off, bwrap nor account", v)
	}
}

// accountSettings reads the Windows sandbox's settings: KILN_BUILD_ACCOUNT (the local account
// builds run as, default kiln-build), KILN_SANDBOX_READONLY and KILN_SANDBOX_ENV as for bwrap.
// KILN_SANDBOX_NETWORK may only be host: the account cannot cut a build's network.
func accountSettings(goos string, getenv func(string) string) (sandbox.Account, error) {
	if goos != "windows" {
		return sandbox.Account{}, fmt.Errorf("KILN_SANDBOX=account runs builds as a Windows account of their own: it is for Windows; on %s use %s",
			goos, loopSandboxDefault(goos, false))
	}
	a := sandbox.Account{Name: settings.BuildAccount.Get(getenv)}
	if err := sandbox.CheckAccountName(a.Name); err != nil {
		return a, fmt.Errorf("KILN_BUILD_ACCOUNT: %w", err)
	}
	if n := getenv(settings.SandboxNetwork.Name); n != "" && n != string(sandbox.NetworkHost) {
		return a, fmt.Errorf("KILN_SANDBOX_NETWORK: %q: a Windows build runs as an account of its own on this machine's network "+
			"(only host is possible; unset it)", n)
	}
	b, err := bubblewrapSettings(getenv)
	if err != nil {
		return a, err
	}
	a.ReadOnly, a.PassEnv = b.ReadOnly, b.PassEnv
	return a, nil
}

// bubblewrapSettings reads the sandbox's settings: KILN_BWRAP (the binary), KILN_SANDBOX_NETWORK
// (none, the default: no network; or host), KILN_SANDBOX_READONLY (absolute directories builds see read-only)
// and KILN_SANDBOX_ENV (names of variables passed to builds; never kiln's own).
func bubblewrapSettings(getenv func(string) string) (sandbox.Bubblewrap, error) {
	b := sandbox.Bubblewrap{Path: getenv(settings.Bwrap.Name)}
	network, err := sandbox.ParseNetwork(getenv(settings.SandboxNetwork.Name))
	if err != nil {
		return b, fmt.Errorf("KILN_SANDBOX_NETWORK: %w", err)
	}
	b.Network = network
	for _, p := range commaSplit(settings.SandboxReadOnly.Get(getenv)) {
		if !filepath.IsAbs(p) {
			return b, fmt.Errorf("KILN_SANDBOX_READONLY: %q is not an absolute path", p)
		}
		b.ReadOnly = append(b.ReadOnly, filepath.Clean(p))
	}
	for _, name := range commaSplit(settings.SandboxEnv.Get(getenv)) {
		if strings.HasPrefix(name, "KILN_") || strings.ContainsAny(name, "= ") {
			return b, fmt.Errorf("KILN_SANDBOX_ENV: %q cannot be passed to builds", name)
		}
		b.PassEnv = append(b.PassEnv, name)
	}
	return b, nil
}
