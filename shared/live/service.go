package live

import (
	"context"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Authenticator resolves the token a socket connects with, and again later by its hash.
type Authenticator interface {
	Resolve(ctx context.Context, secret string) (*auth.Principal, error)
	ResolveHash(ctx context.Context, hash string, session bool) (*auth.Principal, error)
}

// Builds reads builds.
type Builds interface {
	GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error)
}

// Logs reads build logs.
type Logs interface {
	Read(ctx context.Context, orgID, buildID string, from int64, max int) ([]buildlog.Line, error)
	Last(ctx context.Context, orgID, buildID string) (int64, error)
}

// Limits of a socket.
const (
	// MaxRooms is how many builds one socket may watch at once.
	MaxRooms = 100
	// connLifetime is how long a socket is kept at most (API Gateway closes one after 2 hours).
	connLifetime = 24 * time.Hour
	// leaseTime is how long a sender may hold a membership before another may take it over.
	leaseTime = 30 * time.Second
	// replayPage is how many lines a replay reads at a time.
	replayPage = 500
	// fanout is how many sockets one change is sent to at once.
	fanout = 16
)

// Pings are the Engine.IO ping interval and timeout a deployment promises its clients: the
// server pings every Interval, and a client that heard nothing for Interval+Timeout reconnects.
type Pings struct {
	Interval, Timeout time.Duration
}

// Service is the live events of a deployment.
type Service struct {
	Registry Registry
	Sender   Sender
	Auth     Authenticator
	Builds   Builds
	Logs     Logs
	// Limit gives an organization's socket limit (0: none) and its plan.
	Limit func(ctx context.Context, orgID string) (int, kiln.Plan, error)
	Pings Pings
	// MaxPayload is the largest message the deployment takes from a client, in bytes.
	MaxPayload int64
	Now        func() time.Time
	Logger     *slog.Logger
}

func (s *Service) now() time.Time { return kiln.Now(s.Now) }

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}
