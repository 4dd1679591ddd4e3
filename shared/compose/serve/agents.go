package serve

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/diskspace"
	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
	"github.com/kilnbuild/kiln/shared/store"
)

// AgentWaking is the workflow of kiln serve as the build service sees it: the local workers,
// and the agents' waiting claims, woken whenever a build for an agent pool is queued.
type AgentWaking struct {
	builds.Workflow
	Agents *agentpool.Dispatcher
}

// Start starts b on the workflow, first waking the agents' waiting claims when b is for a pool.
func (w AgentWaking) Start(ctx context.Context, b *kiln.Build) error {
	if b.AgentPool != "" {
		w.Agents.Notify()
	}
	return w.Workflow.Start(ctx, b)
}

// withAgentAPIs serves, beside the API, the host API under /host/v1/ (an agent runs the build
// it claimed through it, as a build host does) and the agents' claim endpoint under /agent/v1/.
// Artifacts come through presigned parts when the artifact store makes them (S3), else in one
// streamed PUT into the store.
func withAgentAPIs(api http.Handler, cfg Config, st store.Store, m *buildMachine, keys *keyring.Keyring, gh *github.Client, logger *slog.Logger) http.Handler {
	hosts := &agentapi.Server{
		Store: st, Lifecycle: m.service.Lifecycle, Logs: m.core.RunnerLogs(m.logs), OpenSealed: keys.Sealer().Open, Logger: logger,
		TimeLimit: cfg.BuildTimeout, MaxLogLines: cfg.LogMaxLines, ArtifactMax: cfg.ArtifactMax,
		Caches: m.core.Caches, CacheMaxPerOrg: m.core.CacheMaxPerOrg, // agents restore and save build caches too
		RenewPerforce: &perforce.Connector{Verifier: cfg.PerforceVerifier(), Open: keys.Sealer().Open, Store: st,
			Seal: keys.Sealer().Seal, Logger: logger},
	}
	if up, ok := m.artifacts.(agentapi.Uploads); ok {
		hosts.Uploads = up
	} else {
		hosts.Artifacts = m.artifacts
		hosts.DiskRoom = dataVolumeRoom(cfg.Data, m.reserve) // the file store writes to the data volume
	}
	if gh != nil {
		hosts.GitHub = githubSource{gh}
	}
	claims := &agentapi.Claims{Dispatcher: m.agents, HostURL: cfg.PublicURL, Logger: logger}
	mux := http.NewServeMux()
	mux.Handle(agentapi.PathPrefix, hosts.Handler())
	mux.Handle("/agent/v1/", claims.Handler())
	mux.Handle("/", api)
	return mux
}

// dataVolumeRoom is how many bytes the data volume (dir's) takes before its free space falls
// below reserve.
func dataVolumeRoom(dir string, reserve int64) func(context.Context) (int64, error) {
	return func(context.Context) (int64, error) {
		s, err := diskspace.Of(dir)
		if err != nil {
			return 0, err
		}
		return s.Free - reserve, nil
	}
}
