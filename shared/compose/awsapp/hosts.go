package awsapp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/compose/core"
	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/perforce"
	"github.com/kilnbuild/kiln/shared/store"
)

// BuildLogs is where build logs are kept: read by the API, written by build hosts and ended by
// the lifecycle's events.
type BuildLogs = buildLogs

// NewAPIFromParts builds the API handler (the API and the host API) from ready parts.
func NewAPIFromParts(cfg AWSConfig, p Parts) (http.Handler, error) {
	return newAPI(cfg, p.Store, p.Logs, p.Artifacts, p.Keys, p.GitHub, p.Perforce, p.Workflow, p.Queue, p.TaskHeartbeats, p.HostedHosts, p.Logger, p.Live)
}

// withHostAPI serves the host API (build hosts, with their per-build credentials) under
// /host/v1/ beside the API, and the agents' claim endpoint under /agent/v1/ (claims poll the
// store, see claimPollEvery). Artifacts are uploaded through presigned part URLs when the store
// can make them (S3); otherwise the host API refuses uploads. Heartbeats with a task token are
// passed on to beats (Step Functions; nil: none). kiln's hosted Windows hosts claim with their
// instance identity, checked by hosted (nil: the deployment has none). Hosts restore and save
// build caches through it when the core keeps them (S3: presigned).
func withHostAPI(api http.Handler, st store.Store, c *core.Core, logs builds.LogWriter, arts artifacts.Store,
	keys *keyring.Keyring, gh *GitHubApp, beats agentapi.TaskHeartbeats, hosted agentapi.HostedAuthenticator, publicURL string,
	renew *perforce.Connector, timeLimit time.Duration, logger *slog.Logger) http.Handler {
	lifecycle := c.Lifecycle
	// timeLimit (KILN_BUILD_TIMEOUT) goes to every host in its job, as on kiln serve: the host
	// stops the build at it, to the second, and fails it with "time limit".
	hosts := &agentapi.Server{Store: st, Lifecycle: lifecycle, Logs: c.RunnerLogs(logs), OpenSealed: keys.Sealer().Open, TaskHeartbeats: beats, Logger: logger,
		Caches: c.Caches, CacheMaxPerOrg: c.CacheMaxPerOrg, RenewPerforce: renew, TimeLimit: timeLimit}
	if up, ok := arts.(agentapi.Uploads); ok {
		hosts.Uploads = up
	}
	if gh != nil {
		hosts.GitHub = hostGitHub{gh.Client}
	}
	d := &agentpool.Dispatcher{Store: st, Lifecycle: lifecycle}
	if hosted != nil {
		d.Hosted = st
	}
	claims := &agentapi.Claims{Dispatcher: newClaimDispatcher(d, logger), Hosted: hosted, HostURL: publicURL, Logger: logger}
	mux := http.NewServeMux()
	mux.Handle(agentapi.PathPrefix, hosts.Handler())
	mux.Handle("/agent/v1/", claims.Handler())
	mux.Handle("/", api)
	return mux
}

// hostGitHub adapts the App client to what the host API asks.
type hostGitHub struct{ *github.Client }

func (g hostGitHub) CloneURL(ctx context.Context, installationID int64, fullName string) (string, error) {
	r, err := g.Repo(ctx, installationID, fullName)
	if err != nil {
		return "", g.Diagnose(ctx, installationID, fullName, err)
	}
	return r.CloneURL, nil
}

// HostToken mints the build's token; a failure says why (uninstalled, suspended, repository
// removed) when GitHub tells.
func (g hostGitHub) HostToken(ctx context.Context, installationID int64, fullName string) (string, time.Time, error) {
	tok, exp, err := g.Client.HostToken(ctx, installationID, fullName)
	if err != nil {
		return "", time.Time{}, g.Diagnose(ctx, installationID, fullName, err)
	}
	return tok, exp, nil
}
