package e2e

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// backends are the DynamoDB Local and MinIO every aws-local of this test binary shares, each
// with a table and a bucket of its own; started on first use, stopped by Main.
var backends struct {
	once sync.Once
	b    *awslocalapp.Backends
	dir  string
	err  error
}

// sharedBackends starts the package's DynamoDB Local and MinIO on first use.
func sharedBackends(t testing.TB) *awslocalapp.Backends {
	t.Helper()
	backends.once.Do(func() {
		if backends.dir, backends.err = os.MkdirTemp("", "kiln-backends-"); backends.err != nil {
			return
		}
		backends.b, backends.err = awslocalapp.StartBackends(context.Background(), backends.dir, slog.New(slog.DiscardHandler))
	})
	if backends.err != nil {
		t.Fatalf("start DynamoDB Local and MinIO: %v", backends.err)
	}
	return backends.b
}

// ownBackends are the data directories whose aws-local starts DynamoDB Local and MinIO of its
// own, their data under its data directory (WithOwnBackends).
var ownBackends sync.Map

// WithOwnBackends makes the world's aws-local start DynamoDB Local and MinIO of its own, keeping
// their data in its data directory, as kiln aws-local does: for tests of what survives a restart.
func WithOwnBackends(c *serve.Config) { ownBackends.Store(c.Data, true) }

// backendsFor are the backends of the aws-local on dataDir: nil for its own, else the shared ones.
func backendsFor(t testing.TB, dataDir string) *awslocalapp.Backends {
	if _, ok := ownBackends.Load(dataDir); ok {
		return nil
	}
	return sharedBackends(t)
}

// stopBackends stops the shared DynamoDB Local and MinIO, if they started.
func stopBackends() {
	if backends.b != nil {
		backends.b.Stop()
	}
	if backends.dir != "" {
		os.RemoveAll(backends.dir)
	}
}
