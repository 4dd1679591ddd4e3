package builds

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

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestKillDuringABuild kills `kiln serve` with SIGKILL while a build runs, starts it again on the
// same data directory, and checks that no build stays running, no half artifact is visible, and
// a download link issued before the crash still works, and nothing of the build still runs.
func TestKillDuringABuild(t *testing.T) {
	t.Parallel()
	bin := e2e.KilnBinary(t)
	w := e2e.NewWorld(t, e2e.Serve) // for its fake GitHub, engines and configuration; its own service is stopped
	if err := w.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	env := append(os.Environ(),
		"KILN_ADDR=127.0.0.1:"+port, "KILN_DATA="+w.Config.Data, "KILN_ENGINES="+w.Config.Engines,
		"KILN_GITHUB_APP_ID="+w.Config.GitHubAppID, "KILN_GITHUB_APP_KEY="+w.Config.GitHubAppKey,
		"KILN_GITHUB_API_URL="+w.Config.GitHubAPIURL, "KILN_GITHUB_WEB_URL="+w.Config.GitHubWebURL, "KILN_RATE_LIMIT=0")
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
	w.Server.Service, w.Elsewhere = nil, "http://127.0.0.1:"+port
	cmd := start()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	pid := w.AddShooter(t)
	fast := w.AddSetting(t, pid, nil)["id"].(string)
	done := w.WaitEnded(t, w.Trigger(t, pid, fast, ""))
	if done["status"] != "complete" {
		t.Fatalf("first build: %v", done)
	}
	desc := w.Do(t, "GET", "/builds/"+done["id"].(string)+"/download", w.Token, nil)
	url, sum := e2e.Field(t, desc.Body, "url"), e2e.Field(t, desc.Body, "checksumMd5")
	w.Shooter.Commit("slow", "Slow", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\nFAKE_UAT_PAK_MB=8\n"})
	slow := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	id := w.Trigger(t, pid, slow, "")
	w.WaitStatus(t, id, "running")
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	cmd = start()
	b := w.WaitEnded(t, id)
	if b["status"] != "failed" || !strings.HasPrefix(b["failureReason"].(string), "interrupted") {
		t.Fatalf("after the crash: %v", b)
	}
	entries, _ := filepath.Glob(filepath.Join(w.Config.Data, "artifacts", "*", "*"))
	for _, e := range entries {
		if strings.Contains(e, id) || strings.Contains(filepath.Base(e), "partial") {
			t.Errorf("left behind by the crash: %s", e)
		}
	}
	if got := e2e.FetchArtifact(t, url); e2e.MD5Hex(got) != sum {
		t.Fatal("the download link issued before the crash gives other bytes")
	}
	// The crashed service's build (its sandbox, the engine's sleeping workers) was stopped.
	var left []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if left = e2e.ProcessesUnder(w.Config.Data); len(left) == 0 {
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
