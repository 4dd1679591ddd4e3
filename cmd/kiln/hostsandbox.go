package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/kilnbuild/kiln/shared/sandbox"
)

// Sandbox modes of KILN_SANDBOX.
const (
	sandboxOff   = "off"
	sandboxBwrap = "bwrap"
)

// loopSandboxDefault is KILN_SANDBOX's default for `kiln agent` on goos: bwrap on Linux, where a
// studio's long-running agent runs builds of every project of its organization's pool one after
// another, and each build must not reach the agent's token (which claims the pool's other builds)
// nor the agent's files; off elsewhere, where bubblewrap cannot run.
func loopSandboxDefault(goos string) string {
	if goos == "linux" {
		return sandboxBwrap
	}
	return sandboxOff
}

// hostSandbox is what confines an agent's builds on goos, said in its start log: KILN_SANDBOX,
// or def when it is unset. bwrap fails at start where bubblewrap cannot run (anything but Linux,
// a missing bwrap, a kernel or container without user namespaces), with the fix; off runs builds
// unconfined and warns. KILN_BWRAP, KILN_SANDBOX_NETWORK, KILN_SANDBOX_READONLY and
// KILN_SANDBOX_ENV shape the sandbox as for kiln serve.
func hostSandbox(ctx context.Context, goos, def string, getenv func(string) string, logger *slog.Logger) (sandbox.Confiner, error) {
	switch v := cmp.Or(getenv("KILN_SANDBOX"), def); v {
	case sandboxOff:
		logger.Warn("builds run without a sandbox (KILN_SANDBOX=off): the engine and the project's build rules run as this agent's user " +
			"and can read what it can; give the agent a user of its own, and its token in a file (see docs/agents.md)")
		return sandbox.Unconfined{}, nil
	case sandboxBwrap:
		if err := sandbox.Supported(goos); err != nil {
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
	default:
		return nil, fmt.Errorf("KILN_SANDBOX: %q is neither off nor bwrap", v)
	}
}

// bubblewrapSettings reads the sandbox's settings: KILN_BWRAP (the binary), KILN_SANDBOX_NETWORK
// (none, the default: no network; or host), KILN_SANDBOX_READONLY (absolute directories builds see read-only)
// and KILN_SANDBOX_ENV (names of variables passed to builds; never kiln's own).
func bubblewrapSettings(getenv func(string) string) (sandbox.Bubblewrap, error) {
	b := sandbox.Bubblewrap{Path: getenv("KILN_BWRAP")}
	network, err := sandbox.ParseNetwork(getenv("KILN_SANDBOX_NETWORK"))
	if err != nil {
		return b, fmt.Errorf("KILN_SANDBOX_NETWORK: %w", err)
	}
	b.Network = network
	for _, p := range commaSplit(getenv("KILN_SANDBOX_READONLY")) {
		if !filepath.IsAbs(p) {
			return b, fmt.Errorf("KILN_SANDBOX_READONLY: %q is not an absolute path", p)
		}
		b.ReadOnly = append(b.ReadOnly, filepath.Clean(p))
	}
	for _, name := range commaSplit(getenv("KILN_SANDBOX_ENV")) {
		if strings.HasPrefix(name, "KILN_") || strings.ContainsAny(name, "= ") {
			return b, fmt.Errorf("KILN_SANDBOX_ENV: %q cannot be passed to builds", name)
		}
		b.PassEnv = append(b.PassEnv, name)
	}
	return b, nil
}
