// Package core wires kiln's build core once, for every deployment: the build lifecycle with its
// events (org webhooks, mail, GitHub commit statuses or check runs, the auto-deploy wake-up, the log's last
// line, the workflow's end of a build), the plans it checks, the build service, the deliverer
// and the HTTP API's configuration. `kiln serve`, every Lambda and `kiln aws-local` call New
// with their parts and add only what is theirs (workers, hosts, queues, handlers).
package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/downloads"
	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
	"github.com/kilnbuild/kiln/shared/notify"
	"github.com/kilnbuild/kiln/shared/outbound"
	"github.com/kilnbuild/kiln/shared/plans"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/webhooks"
)

// Logs are where build logs are kept: read by the API, ended by the lifecycle's events.
type Logs interface {
	httpapi.LogReader
	builds.LogWriter
}

// Parts are what a deployment brings: its store, logs and artifacts, and how it runs builds.
type Parts struct {
	Store     store.Store
	Logs      Logs
	Artifacts artifacts.Store
	// Keys opens sealed secrets and signs download links. Nil for a function that does neither
	// (it records webhook deliveries without sending them and mails no links).
	Keys *keyring.Keyring
	// GitHub posts commit statuses (nil: no GitHub App).
	GitHub *github.Client
	// Workflow starts and stops builds' runs.
	Workflow builds.Workflow
	// DeliveryWaker wakes whoever delivers artifacts and webhook deliveries when a build becomes
	// ready for auto deploy or a webhook delivery is recorded (in AWS: a sweep message on the
	// delivery queue). Nil: the core's own AutoDeployer and webhook sender, run by this process.
	DeliveryWaker builds.Waker
	// Ended hears of every build that ended (in AWS: answers the task token of the state that
	// waits for an agent's build). Nil: nobody.
	Ended builds.Ended
	// Engines lists the engine versions the build hosts provide, for builds of settings without
	// ueVersion (nil: unknown).
	Engines builds.EngineLister
	Logger  *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// LiveRegistry keeps the sockets of live build events and LiveSender sends to them (nil: no
	// live events). kiln serve sets its sender once the core is made (livesocket.New).
	LiveRegistry live.Registry
	LiveSender   live.Sender
	// LiveInBackground sends lines to sockets in a goroutine (a process that lives on).
	LiveInBackground bool
}

// Settings are the operator's settings the core reads, the same on every deployment.
type Settings struct {
	// Plans are the plans' limits (nil: kiln.DefaultPlans()).
	Plans kiln.PlanTable
	// PublicURL is where kiln is reached: links in mail and commit statuses.
	PublicURL string
	// SMTPURL and SMTPFrom send build notifications (no SMTPURL: no mail).
	SMTPURL, SMTPFrom string
	// OutboundAllow are the private address ranges outbound requests (webhooks, uploads) may
	// reach; by default they reach public addresses only.
	OutboundAllow []netip.Prefix
	// DeliveryAttempts and DeliveryBackoff bound org webhook and auto deploy deliveries.
	DeliveryAttempts int
	DeliveryBackoff  time.Duration
	// RateLimit is API requests per second per token (burst: four times that); 0 turns it off.
	RateLimit float64
	// StatusesInline posts each commit status before the change that caused it returns, within
	// statusTimeout: a Lambda may be frozen as soon as it answers. Otherwise they are posted in
	// the background.
	StatusesInline bool
	// CacheMaxPerOrg caps the bytes of one organization's build caches (0: no cap).
	CacheMaxPerOrg int64
}

// statusTimeout bounds an inline commit status post (each check run request too).
const statusTimeout = 5 * time.Second

// annotateTimeout bounds an inline read of a completed build's log for its check run's
// annotations.
const annotateTimeout = 15 * time.Second

// Core is kiln's build core, wired.
type Core struct {
	Lifecycle *builds.Lifecycle
	// Events is the lifecycle's events, to which a deployment may add a listener of its own
	// before the first change.
	Events       *builds.Fanout
	Webhooks     *webhooks.Sender
	AutoDeployer *builds.AutoDeployer
	Plans        *plans.Plans
	// Mail sends email (build notifications, invitations); nil without KILN_SMTP_URL.
	Mail *notify.SMTP
	// Statuses posts GitHub commit statuses (nil without a GitHub App).
	Statuses *github.StatusPoster
	Builds   *builds.Service
	// Caches are the build caches, kept in the artifact store (nil when it cannot list keys,
	// or there is none): CacheMaxPerOrg caps each organization's.
	Caches         *buildcache.Cache
	CacheMaxPerOrg int64
	// Live sends build statuses and log lines to the sockets that watch them (nil without
	// Parts.LiveRegistry).
	Live *live.Service

	parts    Parts
	settings Settings
}

// New wires the core from a deployment's parts. Store, Logs and Logger are required.
func New(p Parts, s Settings) (*Core, error) {
	if p.Store == nil || p.Logs == nil || p.Logger == nil {
		return nil, errors.New("core: a store, logs and a logger are required")
	}
	sealer := sealerOf(p.Keys)
	client := func() *http.Client { return outbound.NewClient(outbound.Config{Allow: s.OutboundAllow}) }
	c := &Core{parts: p, settings: s, CacheMaxPerOrg: s.CacheMaxPerOrg}
	if st, ok := p.Artifacts.(buildcache.Store); ok {
		var err error
		if c.Caches, err = buildcache.New(st, nil); err != nil {
			return nil, err
		}
	}
	c.Plans = &plans.Plans{Store: p.Store, Table: s.Plans, Now: p.Now}
	c.Webhooks = &webhooks.Sender{
		Store: p.Store, Sealer: sealer, Logger: p.Logger, Render: httpapi.RenderWebhookEvent(p.Store.GetProject), PublicURL: s.PublicURL,
		Stamp:  httpapi.StampArtifactURL(p.Store.GetArtifact, downloadSigner(p.Keys, s.PublicURL)),
		Client: client(), Attempts: s.DeliveryAttempts, Backoff: s.DeliveryBackoff, Now: p.Now,
		Wake: p.DeliveryWaker,
	}
	c.AutoDeployer = &builds.AutoDeployer{
		Store: p.Store, Artifacts: p.Artifacts, Sealer: sealer, Logger: p.Logger,
		Client: client(), Attempts: s.DeliveryAttempts, Backoff: s.DeliveryBackoff, Now: p.Now,
		Wake: p.DeliveryWaker,
	}
	if p.LiveRegistry != nil {
		c.Live = &live.Service{
			Registry: p.LiveRegistry, Sender: p.LiveSender, Builds: p.Store, Logs: p.Logs, Logger: p.Logger, Now: p.Now,
			// Sockets check their credential at connect and again after a change: no cache.
			Auth:  &auth.Authenticator{Store: p.Store, Now: p.Now},
			Limit: c.liveLimit,
		}
	}
	c.Events = &builds.Fanout{Webhooks: c.Webhooks, Logs: c.LiveLogs(p.Logs), Logger: p.Logger, Deliveries: c.AutoDeployer}
	if c.Live != nil {
		c.Events.Live = c.Live
	}
	if p.Ended != nil {
		c.Events.Workflow = p.Ended
	}
	if c.Caches != nil {
		c.Events.Caches = buildcache.Discarder{Cache: c.Caches, Logger: p.Logger}
	}
	if s.SMTPURL != "" {
		sender, err := notify.NewSMTP(s.SMTPURL, s.SMTPFrom)
		if err != nil {
			return nil, fmt.Errorf("KILN_SMTP_URL: %w", err)
		}
		c.Mail = sender
		c.Events.Mail = &builds.Mailer{Store: p.Store, Sender: sender, Logger: p.Logger, Now: p.Now,
			Downloads: downloadSigner(p.Keys, s.PublicURL)}
	}
	if p.GitHub != nil {
		c.Statuses = &github.StatusPoster{GitHub: p.GitHub, Projects: p.Store, Settings: p.Store, Logs: p.Logs,
			PublicURL: s.PublicURL, Logger: p.Logger}
		if s.StatusesInline {
			c.Statuses.Sync, c.Statuses.Timeout, c.Statuses.AnnotateTimeout = true, statusTimeout, annotateTimeout
		}
		c.Events.Statuses = c.Statuses
	}
	// Every claim (the local workflow's, the state machine's for CodeBuild, an agent's or a
	// hosted host's through the API) checks the plan's allowance again.
	c.Lifecycle = &builds.Lifecycle{
		Builds: p.Store, Projects: p.Store, Artifacts: p.Store, Events: c.Events, Starts: c.Plans,
		Logger: p.Logger, Now: p.Now,
	}
	c.AutoDeployer.Lifecycle = c.Lifecycle
	c.Builds = &builds.Service{
		Store: p.Store, Lifecycle: c.Lifecycle, Workflow: p.Workflow, Logger: p.Logger, Now: p.Now,
		Allowance: c.Plans, Skips: p.Store, SkipEvents: c.Webhooks, Engines: p.Engines,
	}
	if p.GitHub != nil {
		c.Builds.Commits = p.GitHub
	}
	return c, nil
}

// RunnerLogs are the build logs the runners write to, kiln serve's own and remote hosts' through
// the host API: the lines go to logs, and the stages they announce onto their builds.
func (c *Core) RunnerLogs(logs builds.LogWriter) builds.LogWriter {
	return builds.StageLog{LogWriter: c.LiveLogs(logs), Lifecycle: c.Lifecycle, Logger: c.parts.Logger}
}

// LiveLogs is a log writer whose lines also reach the sockets watching their build.
func (c *Core) LiveLogs(logs builds.LogWriter) builds.LogWriter {
	if c.parts.LiveRegistry == nil {
		return logs
	}
	return live.Publishing{LogWriter: logs, Live: c.Live, Background: c.parts.LiveInBackground}
}

// liveLimit is an organization's socket limit, its plan's.
func (c *Core) liveLimit(ctx context.Context, orgID string) (int, kiln.Plan, error) {
	org, err := c.parts.Store.GetOrganization(ctx, orgID)
	if err != nil {
		return 0, "", err
	}
	return c.Plans.Limits(org).LiveConnections, org.Plan, nil
}

// sealerOf is the keyring's sealer, nil without a keyring.
func sealerOf(keys *keyring.Keyring) *keyring.Sealer {
	if keys == nil {
		return nil
	}
	return keys.Sealer()
}

// downloadSigner signs download links; without a keyring it is the zero signer.
func downloadSigner(keys *keyring.Keyring, baseURL string) downloads.Signer {
	if keys == nil {
		return downloads.Signer{}
	}
	return downloads.Signer{Key: keys.Key(keyring.PurposeDownload), BaseURL: baseURL}
}
