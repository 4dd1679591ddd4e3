package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/onemachine"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// Paths under KILN_DATA.
const (
	DatabaseFile  = "kiln.db"
	MasterKeyFile = onemachine.MasterKeyFile
)

// Local is kiln's state on one machine, as `kiln serve` and `kiln admin` open it.
type Local struct {
	Store store.Store
	Keys  *keyring.Keyring
}

// OpenLocal opens (creating when needed) the state under dataDir. `kiln serve` and `kiln admin`
// may have it open at the same time.
func OpenLocal(ctx context.Context, dataDir string) (*Local, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	keys, err := keyring.LoadOrCreate(filepath.Join(dataDir, MasterKeyFile))
	if err != nil {
		return nil, err
	}
	st, err := sqlitestore.Open(ctx, filepath.Join(dataDir, DatabaseFile))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return &Local{Store: st, Keys: keys}, nil
}

// Close releases the state.
func (l *Local) Close() error { return l.Store.Close() }

// Service is a running `kiln serve`.
type Service struct {
	machine  *buildMachine
	local    *Local
	lock     *onemachine.DataLock
	server   *http.Server
	listener net.Listener
	logger   *slog.Logger
	done     chan error
	// cancelRequests cancels the context of every request, so long-lived ones (log followers)
	// end when the service stops.
	cancelRequests context.CancelFunc
}

// shutdownGrace bounds a shutdown: the build machine's stop and in-flight requests together.
const shutdownGrace = onemachine.ShutdownGrace

// requestSettle is how long in-flight requests get to finish by themselves at shutdown before
// their contexts are cancelled (which ends log followers).
const requestSettle = time.Second

// Start opens the state, creates the "Local" organization on first start (printing its owner's
// token to out), and serves the API on cfg.Addr in the background.
func Start(ctx context.Context, cfg Config, out io.Writer, logger *slog.Logger) (*Service, error) {
	gh, err := cfg.GitHubApp()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	lock, err := onemachine.LockDataDir(cfg.Data)
	if err != nil {
		return nil, err
	}
	local, err := OpenLocal(ctx, cfg.Data)
	if err != nil {
		lock.Release()
		return nil, err
	}
	fail := func(err error, closers ...func() error) (*Service, error) {
		for _, c := range closers {
			_ = c()
		}
		local.Close()
		lock.Release()
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fail(fmt.Errorf("listen on %s: %w", cfg.Addr, err))
	}
	if err := EnsureLocalOrganization(ctx, local.Store, cfg.Data, "http://"+ln.Addr().String(), out); err != nil {
		return fail(err, ln.Close)
	}
	cfg.PublicURL = publicURL(cfg, ln)
	engineCount := reportStartup(ctx, cfg, logger)
	machine, err := newBuildMachine(ctx, cfg, local.Store, local.Keys, gh, logger)
	if err != nil {
		return fail(err, ln.Close)
	}
	if err := machine.start(ctx); err != nil {
		return fail(err, ln.Close)
	}
	apiCfg := machine.core.API()
	apiCfg.Perforce = cfg.PerforceVerifier()
	apiCfg.GitHubWebhookSecret = cfg.GitHubWebhookSecret
	apiCfg.Engines = engines.Dir{Path: cfg.Engines}
	apiCfg.BuildTimeLimit = cfg.BuildTimeout
	if gh != nil {
		apiCfg.GitHub = gh
		apiCfg.GitHubOAuth = gh.HasOAuthClient() // as in AWS: installations then link through the install flow
		if cfg.SignUp {
			apiCfg.SignIn = gh
		}
	}
	api := withSockets(withAgentAPIs(httpapi.New(apiCfg), cfg, local.Store, machine, local.Keys, gh, logger), machine.sockets)
	requests, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	s := &Service{
		cancelRequests: cancelRequests,
		machine:        machine,
		local:          local,
		lock:           lock,
		listener:       ln,
		logger:         logger,
		done:           make(chan error, 1),
		server: &http.Server{
			Handler:           api,
			ReadHeaderTimeout: onemachine.ReadHeaderTimeout,
			ReadTimeout:       onemachine.ReadTimeout,
			IdleTimeout:       onemachine.IdleTimeout,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
			BaseContext:       func(net.Listener) context.Context { return requests },
		},
	}
	go func() {
		err := s.server.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	logger.Info("kiln serving", slog.String("addr", ln.Addr().String()), slog.String("data", cfg.Data))
	readiness{consoleURL: strings.TrimSuffix(cfg.PublicURL, "/") + "/console/", engines: engineCount, gitHub: gh != nil,
		signUp: apiCfg.SignIn != nil, enginesDir: cfg.Engines}.print(out)
	return s, nil
}

// URL is the base URL the service listens on.
func (s *Service) URL() string { return "http://" + s.listener.Addr().String() }

// Done reports the server's end: nil after a shutdown, an error if serving failed.
func (s *Service) Done() <-chan error { return s.done }

// Shutdown stops the service in the order that loses nothing: first the build machine and the
// deliveries (running builds are failed as interrupted while the store is still open), then the
// HTTP server (requests in flight get requestSettle to finish, then their contexts are
// cancelled, which ends log followers), then the store. All of it within shutdownGrace.
func (s *Service) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, shutdownGrace)
	defer cancel()
	err := s.machine.stop(ctx)
	s.machine.sockets.Shutdown() // hijacked connections: the HTTP server's shutdown does not see them
	if herr := s.stopServer(ctx); err == nil {
		err = herr
	}
	if cerr := s.local.Close(); err == nil {
		err = cerr
	}
	s.lock.Release()
	s.logger.Info("kiln stopped")
	return err
}

// stopServer stops accepting requests and waits for those in flight, cancelling their contexts
// after requestSettle.
func (s *Service) stopServer(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.server.Shutdown(ctx) }()
	settle := time.NewTimer(requestSettle)
	defer settle.Stop()
	select {
	case err := <-done:
		s.cancelRequests()
		return err
	case <-settle.C:
	case <-ctx.Done():
	}
	s.cancelRequests()
	return <-done
}

// publicURL is KILN_PUBLIC_URL, or the address actually listened on when it was left to default
// (so port 0 works).
func publicURL(cfg Config, ln net.Listener) string {
	if cfg.publicURLFromAddr {
		return "http://" + ln.Addr().String()
	}
	return cfg.PublicURL
}

// GivenPublicURL is KILN_PUBLIC_URL as the operator gave it: "" when it was left to follow the
// listen address.
func (cfg Config) GivenPublicURL() string {
	if cfg.publicURLFromAddr {
		return ""
	}
	return cfg.PublicURL
}
