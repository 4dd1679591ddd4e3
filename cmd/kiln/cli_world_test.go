package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/syncbuf"
)

// cliWorld is a real kiln serve (in-process, on a loopback port, with a temp data directory)
// wired to a fake GitHub and the stand-in engine of testdata, with a project whose settings
// build a branch that completes (main), one whose cook fails (broken) and a slow one (slow).
// Download URLs go through proxy, which a test may make cut a download.
type cliWorld struct {
	svc      *serve.Service
	token    string
	proxy    *cutProxy
	project  string
	settings map[string]string // branch → setting id
	out      *syncbuf.Buffer   // what kiln serve printed
}

const cliInstallation = 4242

func newCLIWorld(t *testing.T) *cliWorld {
	t.Helper()
	// The customer commands read the user's config dir: a private one, empty.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())

	gh := githubtest.New(t)
	gh.AddInstallation(cliInstallation, "studio")
	repo := gh.AddRepo(cliInstallation, "studio/shooter", true, "main")
	repo.Commit("main", "Add the game", "Ada Lovelace", map[string]string{
		"Shooter/Shooter.uproject":           `{"FileVersion": 3, "EngineAssociation": "5.3"}`,
		"Shooter/Source/Shooter/Shooter.cpp": "// game\n",
	})
	repo.Commit("broken", "Break the cook", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_FAIL=cook\n"})
	repo.Commit("slow", "Slow everything", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=30\n"})

	dir := t.TempDir()
	keyPath := filepath.Join(dir, "github-serve.pem")
	if err := os.WriteFile(keyPath, gh.PrivateKeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	enginesDir := filepath.Join(dir, "engines", "5.3")
	if err := os.CopyFS(enginesDir, os.DirFS("../../testdata/fake-engine")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(enginesDir, engines.RunUATPath), 0o755); err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t)
	cfg, err := serve.LoadConfig([]string{"--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "data"), "--rate_limit", "0",
		"--workers", "2", "--public_url", proxy.URL()}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.GitHubAppID = strconv.FormatInt(gh.AppID, 10)
	cfg.GitHubAppKey = keyPath
	cfg.GitHubAPIURL = gh.URL()
	cfg.GitHubWebURL = gh.WebURL()
	cfg.Engines = filepath.Join(dir, "engines")
	var out syncbuf.Buffer
	svc, err := serve.Start(context.Background(), cfg, &out, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	proxy.setTarget(t, svc.URL())
	w := &cliWorld{svc: svc, proxy: proxy, out: &out, token: regexp.MustCompile(`kiln_[0-9A-Za-z]{40}`).FindString(out.String()), settings: map[string]string{}}
	if w.token == "" {
		t.Fatal("kiln serve printed no token")
	}

	var me struct{ Organization struct{ ID string } }
	w.api(t, "GET", "/auth/me", nil, http.StatusOK, &me)
	w.api(t, "PATCH", "/organizations/"+me.Organization.ID, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": strconv.Itoa(cliInstallation)}},
	}, http.StatusOK, nil)
	var project struct{ ID string }
	w.api(t, "POST", "/projects/add-repo", map[string]any{"name": "Shooter", "installationId": strconv.Itoa(cliInstallation), "repoFullName": "studio/shooter"}, http.StatusCreated, &project)
	w.project = project.ID
	for _, branch := range []string{"main", "broken", "slow"} {
		var s struct{ ID string }
		w.api(t, "POST", "/projects/"+w.project+"/build-settings", map[string]any{
			"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": branch,
		}, http.StatusCreated, &s)
		w.settings[branch] = s.ID
	}
	return w
}

// api calls the service directly (for setting up) and wants the status.
func (w *cliWorld) api(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, w.svc.URL()+path, rd)
	req.Header.Set("Authorization", "Bearer "+w.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// env is the environment of a customer command pointed at this service.
func (w *cliWorld) env(k string) string {
	return map[string]string{"KILN_URL": w.svc.URL(), "KILN_TOKEN": w.token}[k]
}

// runKiln runs the kiln command with env and answers its output and exit status.
func runKiln(t *testing.T, env func(string) string, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, env, &out, &errOut)
	return out.String(), errOut.String(), exitCode(err), err
}

// cutProxy passes requests to the service; while cutNext is set, the next download it passes
// is cut after cutAfter bytes (the connection dropped). It records the Range of every download.
type cutProxy struct {
	srv      *httptest.Server
	mu       sync.Mutex
	target   *httputil.ReverseProxy
	cutAfter int64
	ranges   []string
}

func newCutProxy(t *testing.T) *cutProxy {
	p := &cutProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *cutProxy) URL() string { return p.srv.URL }

func (p *cutProxy) setTarget(t *testing.T, raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p.target = httputil.NewSingleHostReverseProxy(u)
}

// cutNextDownload makes the next download stop after n bytes.
func (p *cutProxy) cutNextDownload(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutAfter = n
}

func (p *cutProxy) downloadRanges() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.ranges...)
}

func (p *cutProxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.ranges = append(p.ranges, r.Header.Get("Range"))
	cut := p.cutAfter
	p.cutAfter = 0
	p.mu.Unlock()
	if cut == 0 {
		p.target.ServeHTTP(w, r)
		return
	}
	rec := &cutWriter{ResponseWriter: w, left: cut}
	p.target.ServeHTTP(rec, r)
}

// cutWriter passes the headers and the first left bytes, then drops the connection.
type cutWriter struct {
	http.ResponseWriter
	left int64
	dead bool
}

func (c *cutWriter) Write(b []byte) (int, error) {
	if c.dead {
		return 0, http.ErrAbortHandler
	}
	if int64(len(b)) > c.left {
		n, _ := c.ResponseWriter.Write(b[:c.left])
		c.left -= int64(n)
		c.ResponseWriter.(http.Flusher).Flush()
		c.dead = true
		panic(http.ErrAbortHandler) // net/http closes the connection mid-body
	}
	c.left -= int64(len(b))
	return c.ResponseWriter.Write(b)
}
