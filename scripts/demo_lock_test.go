//go:build unix

package scripts

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDemoThroughMake is the newcomer's `make demo` (GNU make) with a second demo started beside
// it: one on the same port and directory is refused, naming the running demo, and deletes
// nothing of it; Ctrl-C (SIGINT to make's whole process group) then stops the demo with "demo:
// stopped", and make reports no error. Started from a terminal, make (signalled itself) waits
// for the demo and then ends by the same signal, as every make does (a shell shows no message
// for it); started as a script's background job, whose SIGINT is ignored from the start (bash
// cannot trap it then: kiln and the fake GitHub, which listen for it, stop by themselves with
// status 0), make ends with status 0.
func TestDemoThroughMake(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kiln and runs the demo")
	}
	for _, tool := range []string{"bash", "make", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the processes the demo started")
	}
	byInterrupt := func(err error) bool {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return false
		}
		ws, ok := exit.Sys().(syscall.WaitStatus)
		return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
	}
	for _, tc := range []struct {
		name  string
		shell string // how make is started
		ended func(err error) bool
	}{
		{"a terminal's job", "exec make demo", func(err error) bool { return err == nil || byInterrupt(err) }},
		{"a script's background job", `trap "" INT; exec make demo`, func(err error) bool { return err == nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mk := exec.Command("bash", "-c", tc.shell)
			mk.Dir = ".."
			d := launchDemo(t, mk, t.TempDir())
			refuseSecondDemo(t, d)
			d.ctrlC(t, tc.ended)
			printed := d.stderr.String()
			if !strings.Contains(printed, "demo: stopped") {
				t.Errorf("no \"demo: stopped\" after Ctrl-C:\n%s", printed)
			}
			for _, bad := range []string{"ended by itself", "make: ***", "Error", "Interrupt"} {
				if strings.Contains(printed, bad) {
					t.Errorf("Ctrl-C printed %q:\n%s", bad, printed)
				}
			}
		})
	}
}

// TestDemosSideBySide is the two demos at once: a second one on other ports, with the
// same KILN_DEMO_DIR, keeps to a directory of its own, and the first goes on working with its
// data and token.
func TestDemosSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kiln and runs two demos")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the processes the demo started")
	}
	first := startDemo(t)
	before := filesUnder(t, first.dir)
	second := launchDemo(t, exec.Command("./demo.sh"), first.base, "KILN_DEMO_SIGNUP=1")
	if second.dir == first.dir {
		t.Fatalf("both demos in %s", first.dir)
	}
	for _, d := range []*runningDemo{first, second} {
		if code := get(t, "http://127.0.0.1:"+d.port+"/auth/me", tokenIn(t, d.out)); code != http.StatusOK {
			t.Errorf("the demo on port %s: GET /auth/me %d", d.port, code)
		}
	}
	for _, f := range before {
		if _, err := os.Stat(filepath.Join(first.dir, f)); err != nil {
			t.Errorf("the second demo deleted the first one's %s: %v", f, err)
		}
	}
	second.interrupt(t)
	first.interrupt(t)
}

// refuseSecondDemo starts a second demo on d's port and directory, and checks that it is refused
// before it starts or deletes anything, and that d still answers.
func refuseSecondDemo(t *testing.T, d *runningDemo) {
	t.Helper()
	token := tokenIn(t, d.out)
	before := filesUnder(t, d.dir)
	second := exec.Command("./demo.sh")
	second.Env = append(os.Environ(), "KILN_DEMO_DIR="+d.base, "KILN_DEMO_PORT="+d.port, "KILN_DEMO_GITHUB_PORT="+freePort(t))
	out, err := second.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
		t.Fatalf("a second demo on port %s: %v, want exit status 2:\n%s", d.port, err, out)
	}
	for _, want := range []string{"another demo runs here: pid " + strconv.Itoa(scriptPID(t, d)), "127.0.0.1:" + d.port,
		"GitHub on 127.0.0.1:" + d.ghPort, d.dir, "KILN_DEMO_PORT="} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	for _, f := range append(before, "/data/serve.lock", "/demo.lock") {
		if _, err := os.Stat(filepath.Join(d.dir, f)); err != nil {
			t.Errorf("the refused demo deleted the running one's %s: %v", f, err)
		}
	}
	if code := get(t, "http://127.0.0.1:"+d.port+"/auth/me", token); code != http.StatusOK {
		t.Fatalf("GET /auth/me after the refused demo: %d", code)
	}
}

// The demo's lock: one held by a running demo refuses the new one and leaves the directory as it
// is; one whose demo is gone, or whose pid is now another program's, is taken over.
func TestDemoLock(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc to tell a demo's pid from another program's")
	}
	// A process that looks like a running demo (demo.sh in its command line).
	running := exec.Command("bash", "-c", "exec -a demo.sh sleep 120")
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = running.Process.Kill(); _ = running.Wait() })
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	_, flockErr := exec.LookPath("flock")
	for _, tc := range []struct {
		name    string
		pid     int
		serving bool   // a kiln serve (here: flock) still holds the data's serve.lock
		refused string // what the refusal says
	}{
		{name: "held by a running demo", pid: running.Process.Pid, refused: "another demo runs here: pid " + strconv.Itoa(running.Process.Pid)},
		{name: "its demo is gone", pid: gone.Process.Pid},
		{name: "its pid is another program's", pid: os.Getpid()},
		{name: "its demo is gone, its kiln serve is not", pid: gone.Process.Pid, serving: true, refused: "demo: a kiln serve (pid 4242) still runs on "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, port := t.TempDir(), freePort(t)
			dir := filepath.Join(base, port)
			lock := filepath.Join(dir, "demo.lock")
			if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
				t.Fatal(err)
			}
			held := strconv.Itoa(tc.pid) + " 9999 2026-11-28T15:00:00Z\n"
			for f, body := range map[string]string{lock: held, filepath.Join(dir, "data", "serve.lock"): "4242\n"} {
				if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.serving {
				if flockErr != nil {
					t.Skip("flock is not installed")
				}
				serving := exec.Command("flock", filepath.Join(dir, "data", "serve.lock"), "sleep", "120")
				if err := serving.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = serving.Process.Kill(); _ = serving.Wait() })
				for i := 0; exec.Command("flock", "-n", filepath.Join(dir, "data", "serve.lock"), "true").Run() == nil; i++ {
					if i == 100 {
						t.Fatal("flock did not take serve.lock")
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			cmd := exec.Command("./demo.sh")
			// GO=false: a demo that takes the lock stops at once, at its compile.
			cmd.Env = append(os.Environ(), "GO=false", "KILN_DEMO_DIR="+base, "KILN_DEMO_PORT="+port, "KILN_DEMO_GITHUB_PORT="+freePort(t))
			out, err := cmd.CombinedOutput()
			exit, _ := err.(*exec.ExitError)
			if tc.refused != "" {
				if exit == nil || exit.ExitCode() != 2 || !strings.Contains(string(out), tc.refused) {
					t.Fatalf("%v, want a refusal (exit status 2) saying %q:\n%s", err, tc.refused, out)
				}
				if got := readFile(lock); !tc.serving && got != held {
					t.Errorf("the lock now holds %q, want %q", got, held)
				}
				if _, err := os.Stat(lock); tc.serving && !os.IsNotExist(err) {
					t.Errorf("the refused demo left its lock (%v)", err)
				}
				if _, err := os.Stat(filepath.Join(dir, "data", "serve.lock")); err != nil {
					t.Errorf("the running demo's data: %v", err)
				}
				if strings.Contains(string(out), "compiling") {
					t.Errorf("the refused demo went on:\n%s", out)
				}
				return
			}
			if exit == nil || exit.ExitCode() != 1 || !strings.Contains(string(out), "compiling failed") || strings.Contains(string(out), "another demo") {
				t.Fatalf("%v, want the lock taken over and the compile (GO=false) failed:\n%s", err, out)
			}
			if _, err := os.Stat(lock); !os.IsNotExist(err) {
				t.Errorf("the lock is left after the demo ended (%v)", err)
			}
		})
	}
}

// tokenIn is the owner's token the demo printed.
func tokenIn(t *testing.T, out string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "The owner's API token: ")
	if !ok || len(rest) < 45 {
		t.Fatalf("no owner token in:\n%s", out)
	}
	return rest[:45]
}

// get answers the status of GET url with a bearer token.
func get(t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// filesUnder lists the files under dir, as paths from dir, but SQLite's passing ones (journals).
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && !strings.HasSuffix(path, "-journal") {
			out = append(out, strings.TrimPrefix(path, dir))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// scriptPID is the pid of the demo script of a demo started through make: the process of make's
// group whose command is demo.sh (bash runs make's one-command recipe in place).
func scriptPID(t *testing.T, d *runningDemo) int {
	t.Helper()
	for pid := range group(t, d.pgid) {
		if strings.Contains(readFile("/proc", strconv.Itoa(pid), "cmdline"), "demo.sh") {
			return pid
		}
	}
	t.Fatalf("no demo.sh in the group of make: %v", group(t, d.pgid))
	return 0
}
