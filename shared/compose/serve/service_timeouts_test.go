package serve

import (
	"context"
	"io"
	"log/slog"
	"testing"
)

// TestServerHasReadTimeouts: kiln serve's HTTP server bounds how long a client may take to send
// its headers and its whole request, and how long an idle connection stays open.
func TestServerHasReadTimeouts(t *testing.T) {
	cfg, err := LoadConfig([]string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := Start(context.Background(), cfg, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Shutdown(context.Background())
	srv := svc.server
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 || srv.ReadTimeout < srv.ReadHeaderTimeout {
		t.Fatalf("timeouts: header %v, request %v, idle %v", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout)
	}
	if srv.WriteTimeout != 0 {
		t.Fatalf("WriteTimeout %v would cut log follow streams", srv.WriteTimeout)
	}
}
