package serve

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/kilnbuild/kiln/shared/sandbox"
)

// organizationCounter counts the organizations of the service's store.
type organizationCounter interface {
	CountOrganizations(ctx context.Context) (int, error)
}

// newSandbox returns what confines this machine's builds. With KILN_SANDBOX=bwrap, a bwrap that
// is missing or cannot make sandboxes here does not stop the service: its builds fail with the
// cause and the fix, and the log says so at start. With KILN_SANDBOX=off the service refuses to
// start, and builds refuse to run, while it holds several organizations, unless the operator
// confirmed it with KILN_SANDBOX_OFF_I_TRUST_EVERY_ORGANIZATION=1.
func newSandbox(ctx context.Context, cfg Config, orgs organizationCounter, logger *slog.Logger) (sandbox.Confiner, error) {
	if cfg.Sandbox == "off" {
		logger.Warn("KILN_SANDBOX=off: builds run without a sandbox, as kiln's own user (as a build uid of KILN_BUILD_UIDS " +
			"when kiln runs as root): a build can read kiln's keys, database and every organization's code that its user can. " +
			"Use it only for a service that builds for one trusted studio.")
		if cfg.SandboxOffConfirmed {
			return sandbox.Unconfined{UIDs: cfg.BuildUIDs}, nil
		}
		if err := checkOneOrganization(ctx, orgs); err != nil {
			return nil, err
		}
		return sandbox.Unconfined{UIDs: cfg.BuildUIDs, Allow: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := checkOneOrganization(ctx, orgs); err != nil {
				return &sandbox.Error{Reason: "build sandbox off: " + err.Error()}
			}
			return nil
		}}, nil
	}
	if err := sandbox.Supported(runtime.GOOS); err != nil {
		return nil, fmt.Errorf("KILN_SANDBOX=bwrap: %w; or run kiln serve on Linux and build on this machine with kiln agent", err)
	}
	network := cfg.SandboxNetwork
	if network == "" {
		network = sandbox.NetworkNone
	}
	if network == sandbox.NetworkHost {
		logger.Warn("KILN_SANDBOX_NETWORK=host: builds share this host's network, so a build's code can reach kiln's own API, " +
			"every service listening on this host's loopback or private network, and on a cloud VM the metadata service " +
			"(169.254.169.254) and the VM's credentials. Use none unless builds must download.")
	}
	c, err := sandbox.Open(ctx, sandbox.Bubblewrap{
		Path: cfg.Bwrap, Network: network, UIDs: cfg.BuildUIDs, ReadOnly: cfg.SandboxReadOnly, PassEnv: cfg.SandboxEnv,
	})
	if err != nil {
		logger.Error("builds will fail until the build sandbox works: "+sandbox.FixHint, slog.String("error", err.Error()))
		return c, nil
	}
	attrs := []any{slog.String("network", string(network))}
	if os.Geteuid() == 0 {
		attrs = append(attrs, slog.String("build_uids", cfg.BuildUIDs.String()))
	}
	logger.Info("builds run in a bubblewrap sandbox", attrs...)
	return c, nil
}

// checkOneOrganization refuses unconfined builds on a service that holds several organizations.
func checkOneOrganization(ctx context.Context, orgs organizationCounter) error {
	n, err := orgs.CountOrganizations(ctx)
	if err != nil {
		return fmt.Errorf("KILN_SANDBOX=off: %w", err)
	}
	if n > 1 {
		return fmt.Errorf("KILN_SANDBOX=off, but this service holds %d organizations: without a sandbox each "+
			"organization's builds could read the others' code and kiln's keys. Set KILN_SANDBOX=bwrap, or "+
			"confirm with KILN_SANDBOX_OFF_I_TRUST_EVERY_ORGANIZATION=1", n)
	}
	return nil
}
