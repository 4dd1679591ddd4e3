package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/syncbuf"
)

// plainService is kiln serve with its first organization and nothing else (no GitHub, no
// engines), for the CLI's organization commands: its data directory and the owner's token.
type plainService struct {
	svc   *serve.Service
	data  string
	owner string
	out   *syncbuf.Buffer // what kiln serve printed
}

func startPlainService(t *testing.T) *plainService {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	data := filepath.Join(t.TempDir(), "data")
	cfg, err := serve.LoadConfig([]string{"--addr", "127.0.0.1:0", "--data", data, "--rate_limit", "0"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out syncbuf.Buffer
	svc, err := serve.Start(context.Background(), cfg, &out, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	return &plainService{svc: svc, data: data, owner: regexp.MustCompile(`kiln_[0-9A-Za-z]{40}`).FindString(out.String()), out: &out}
}

// envOf is the CLI's environment with the service's URL and token.
func (p *plainService) envOf(token string) func(string) string {
	return func(k string) string { return map[string]string{"KILN_URL": p.svc.URL(), "KILN_TOKEN": token}[k] }
}
