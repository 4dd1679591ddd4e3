package core

import (
	"context"
	"time"

	"github.com/kilnbuild/kiln/shared/buildsettings"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/outbound"
)

// authCacheTTL is how long the API trusts a token it checked: a revoked token stops working
// within it.
const authCacheTTL = 5 * time.Second

// API is the HTTP API's configuration on the core, the same on every deployment; the deployment
// sets on it what is its own (the GitHub App, Perforce, engines, time limit, buffering).
func (c *Core) API() httpapi.Config {
	allow := c.settings.OutboundAllow
	cfg := httpapi.Config{
		Store:      c.parts.Store,
		Keys:       c.parts.Keys,
		Logger:     c.parts.Logger,
		Builds:     c.Builds,
		Plans:      c.Plans,
		Deliveries: c.AutoDeployer,
		Webhooks:   c.Webhooks,
		// Chat webhooks may point at an allowed address instead of their service.
		OutboundAllow: c.settings.OutboundAllow,
		Artifacts:     c.parts.Artifacts,
		Logs:          c.parts.Logs,
		PublicURL:     c.settings.PublicURL,
		// Build settings are saved under the core's plans; the upload URL is checked as
		// deliveries reach it.
		BuildSettings: &buildsettings.Service{
			Store: c.parts.Store, Sealer: sealerOf(c.parts.Keys), Plans: c.Plans, Now: c.parts.Now,
			CheckUploadURL: func(ctx context.Context, rawURL string) error {
				return outbound.CheckURL(ctx, nil, rawURL, allow)
			},
		},
		RateLimit:    httpapi.RateLimit{PerSecond: c.settings.RateLimit, Burst: max(1, int(c.settings.RateLimit*4))},
		AuthCacheTTL: authCacheTTL,
		Now:          c.parts.Now,

		BuildCacheMaxPerOrg: c.CacheMaxPerOrg,
	}
	if c.Live != nil { // never a nil *Service in the interface
		cfg.Sockets = c.Live
	}
	if c.Mail != nil { // never a nil *SMTP in the interface
		cfg.Mail = c.Mail
	}
	if c.Caches != nil { // never a nil *Cache in the interface
		cfg.BuildCaches = c.Caches
		cfg.BuildSettings.Caches, cfg.BuildSettings.Settings, cfg.BuildSettings.Logger = c.Caches, c.parts.Store, c.parts.Logger
	}
	return cfg
}
