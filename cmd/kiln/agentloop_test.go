package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/engines"
)

// TestAgentLoopClaimsUntilStopped: `kiln agent` reads its settings from flags over KILN_AGENT_*,
// offers the engines of its directory, keeps claiming while nothing comes, and returns cleanly
// when stopped; without a URL or token, or without engines, it refuses to start.
func TestAgentLoopClaimsUntilStopped(t *testing.T) {
	engines := fakeEngines(t, "5.4")
	var claims atomic.Int32
	var gotAuth, gotBody atomic.Value
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != agentapi.ClaimPath {
			http.NotFound(w, r)
			return
		}
		buf := new(bytes.Buffer)
		_, _ = buf.ReadFrom(r.Body)
		gotAuth.Store(r.Header.Get("Authorization"))
		gotBody.Store(buf.String())
		claims.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer api.Close()
	env := map[string]string{"KILN_AGENT_URL": api.URL, "KILN_AGENT_TOKEN": "kagent_env", "KILN_AGENT_PLATFORMS": "Win64"}
	getenv := func(k string) string { return env[k] }

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		done <- agentCmd(ctx, []string{"--token", "kagent_flag", "--pool", "win", "--engines", engines}, getenv, &stderr)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for claims.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("kiln agent after a stop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("kiln agent did not stop")
	}
	if claims.Load() < 2 {
		t.Fatalf("%d claims, want it to claim again after an empty one", claims.Load())
	}
	body, _ := gotBody.Load().(string)
	if gotAuth.Load() != "Bearer kagent_flag" || !strings.Contains(body, `"pool":"win"`) || !strings.Contains(body, `"platforms":["Win64"]`) ||
		!strings.Contains(body, `"engineVersions":["5.4"]`) {
		t.Fatalf("claim: %v %s", gotAuth.Load(), body)
	}
	if strings.Contains(stderr.String(), "kagent_") {
		t.Errorf("the token was printed: %s", stderr.String())
	}

	for name, args := range map[string][]string{
		"no token":    {"--url", api.URL, "--engines", engines},
		"no engines":  {"--url", api.URL, "--token", "kagent_x", "--engines", t.TempDir()},
		"an argument": {"--url", api.URL, "--token", "kagent_x", "--engines", engines, "extra"},
	} {
		if err := agentCmd(context.Background(), args, func(string) string { return "" }, &bytes.Buffer{}); err == nil {
			t.Errorf("%s: kiln agent started", name)
		}
	}
}

// fakeEngines is an engines directory with an installation (a RunUAT that does nothing) of each
// version.
func fakeEngines(t *testing.T, versions ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range versions {
		runUAT := filepath.Join(dir, v, filepath.FromSlash(engines.RunUATPath))
		if err := os.MkdirAll(filepath.Dir(runUAT), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(runUAT, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
