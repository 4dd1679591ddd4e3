package app

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillDuringABuild kills `kiln serve` with SIGKILL while a build runs, starts it again on the
// same data directory, and checks that no build stays running, no half artifact is visible, and
// a download link issued before the crash still works, and nothing of the build still runs.
func TestKillDuringABuild(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kiln")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kiln").CombinedOutput(); err != nil {
		t.Fatalf("build kiln: %v\n%s", err, out)
	}
	w := newWorld(t) // for its fake GitHub, engines and configuration; its own service is stopped
	if err := w.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	env := append(os.Environ(),
		"KILN_ADDR=127.0.0.1:"+port, "KILN_DATA="+w.cfg.Data, "KILN_ENGINES="+w.cfg.Engines,
		"KILN_GITHUB_APP_ID="+w.cfg.GitHubAppID, "KILN_GITHUB_APP_KEY="+w.cfg.GitHubAppKey,
		"KILN_GITHUB_API_URL="+w.cfg.GitHubAPIURL, "KILN_GITHUB_WEB_URL="+w.cfg.GitHubWebURL, "KILN_RATE_LIMIT=0")
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "serve")
		cmd.Env = env
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stderr)
			once := false
			for sc.Scan() {
				if !once && strings.Contains(sc.Text(), "kiln serving") {
					close(ready)
					once = true
				}
			}
		}()
		select {
		case <-ready:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatal("kiln serve did not start")
		}
		return cmd
	}
	w.testService.Service = &Service{listener: fixedAddr("127.0.0.1:" + port)}
	cmd := start()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	pid := w.addShooter(t)
	fast := w.addSetting(t, pid, nil)["id"].(string)
	done := w.waitEnded(t, w.trigger(t, pid, fast, ""))
	if done["status"] != "complete" {
		t.Fatalf("first build: %v", done)
	}
	desc := w.do(t, "GET", "/builds/"+done["id"].(string)+"/download", w.token, nil)
	url, sum := field(t, desc.Body, "url"), field(t, desc.Body, "checksumMd5")
	w.shooter.Commit("slow", "Slow", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\nFAKE_UAT_PAK_MB=8\n"})
	slow := w.addSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	id := w.trigger(t, pid, slow, "")
	w.waitStatus(t, id, "running")
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	cmd = start()
	b := w.waitEnded(t, id)
	if b["status"] != "failed" || !strings.HasPrefix(b["failureReason"].(string), "interrupted") {
		t.Fatalf("after the crash: %v", b)
	}
	entries, _ := filepath.Glob(filepath.Join(w.cfg.Data, "artifacts", "*", "*"))
	for _, e := range entries {
		if strings.Contains(e, id) || strings.Contains(filepath.Base(e), "partial") {
			t.Errorf("left behind by the crash: %s", e)
		}
	}
	if got := fetchArtifact(t, url); md5hex(got) != sum {
		t.Fatal("the download link issued before the crash gives other bytes")
	}
	// The crashed service's build (its sandbox, the engine's sleeping workers) was stopped.
	var left []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if left = processesUnder(w.cfg.Data); len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("the crashed service's build still runs: %v", left)
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// fixedAddr is a listener stand-in that only reports an address, so the test helpers can talk to
// a kiln serve running in another process.
type fixedAddr string

func (a fixedAddr) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (a fixedAddr) Close() error              { return nil }
func (a fixedAddr) Addr() net.Addr            { addr, _ := net.ResolveTCPAddr("tcp", string(a)); return addr }
