//go:build unix

// Package scripts holds the repository's scripts; its test runs `make demo`'s script as a
// newcomer would.
package scripts

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/syncbuf"
)

// TestDemo runs scripts/demo.sh (what `make demo` runs), follows the steps it prints to a
// downloaded artifact, checks its MD5, stops the demo as Ctrl-C does, and checks that nothing it
// started is left running.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kiln and runs a whole build")
	}
	for _, tool := range []string{"bash", "curl", "md5sum", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the processes the demo started")
	}
	d := startDemo(t, "KILN_RATE_LIMIT=0") // any other setting reaches kiln serve
	out, demoDir, pgid := d.out, d.dir, d.pgid
	if !strings.Contains(out, "data in "+filepath.Join(d.base, d.port, "data")) {
		t.Errorf("the demo does not keep its data in KILN_DEMO_DIR/KILN_DEMO_PORT:\n%s", out)
	}
	if !strings.Contains(out, "The owner's API token: kiln_") {
		t.Fatalf("no owner token in:\n%s", out)
	}
	_, steps, ok := strings.Cut(out, "# --- demo steps ---\n")
	steps, _, ok2 := strings.Cut(steps, "# --- end of demo steps ---\n")
	if !ok || !ok2 {
		t.Fatalf("no steps in:\n%s", out)
	}

	// Follow the steps as printed, in a directory of their own.
	work := t.TempDir()
	run := exec.Command("bash", "-euo", "pipefail", "-c", steps)
	run.Dir = work
	got, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the printed steps failed: %v\n%s\nkiln's log:\n%s", err, got, readFile(demoDir, "kiln.log"))
	}
	if !strings.Contains(string(got), "\ncomplete\n") || !strings.Contains(string(got), "shooter.tar.gz: OK") {
		t.Fatalf("the steps did not end with a complete build and a verified artifact:\n%s", got)
	}
	// The artifact's MD5, checked here too.
	var dl struct{ ChecksumMD5 string }
	if err := json.Unmarshal([]byte(readFile(work, "download.json")), &dl); err != nil {
		t.Fatal(err)
	}
	h := md5.Sum([]byte(readFile(work, "shooter.tar.gz")))
	if hex.EncodeToString(h[:]) != dl.ChecksumMD5 || dl.ChecksumMD5 == "" {
		t.Fatalf("artifact MD5 %x, download says %q", h, dl.ChecksumMD5)
	}

	// Extra settings reach kiln serve.
	procs := group(t, pgid)
	var kilnPID int
	for pid, name := range procs {
		if name == "kiln" {
			kilnPID = pid
		}
	}
	if kilnPID == 0 {
		t.Fatalf("no kiln process in the demo's group: %v", procs)
	}
	if env := readFile("/proc", strconv.Itoa(kilnPID), "environ"); !strings.Contains(env, "\x00KILN_RATE_LIMIT=0\x00") && !strings.HasPrefix(env, "KILN_RATE_LIMIT=0\x00") {
		t.Error("KILN_RATE_LIMIT did not reach kiln serve")
	}
	d.interrupt(t)
}

// runningDemo is demo.sh (or `make demo`) started by a test, in a process group of its own,
// with what it printed up to the end of its steps.
type runningDemo struct {
	out          string
	base         string // KILN_DEMO_DIR
	dir          string // the demo's own directory: KILN_DEMO_DIR/KILN_DEMO_PORT
	port, ghPort string
	pgid         int
	exited       chan error
	stderr       *syncbuf.Buffer
	stopped      bool
}

// startDemo runs ./demo.sh with env added to the test's environment, on free ports and in a
// temporary KILN_DEMO_DIR, and waits (up to 5 minutes: it compiles kiln) until it has printed
// all it prints before serving: up to the line that says how to stop it. The test's end kills
// whatever is left of it.
func startDemo(t *testing.T, env ...string) *runningDemo {
	t.Helper()
	return launchDemo(t, exec.Command("./demo.sh"), t.TempDir(), env...)
}

// launchDemo starts cmd (demo.sh, or make demo) as startDemo does, with base as KILN_DEMO_DIR.
// Its standard output and error are the demo's.
func launchDemo(t *testing.T, cmd *exec.Cmd, base string, env ...string) *runningDemo {
	t.Helper()
	d := &runningDemo{port: freePort(t), ghPort: freePort(t), base: base, exited: make(chan error, 1), stderr: &syncbuf.Buffer{}}
	d.dir = filepath.Join(base, d.port)
	cmd.Env = append(os.Environ(), "KILN_DEMO_DIR="+d.base, "KILN_DEMO_PORT="+d.port, "KILN_DEMO_GITHUB_PORT="+d.ghPort)
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, like a terminal's job
	cmd.Stderr = d.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.pgid = cmd.Process.Pid
	t.Cleanup(func() {
		if !d.stopped { // the test failed midway: stop the demo anyway
			_ = syscall.Kill(-d.pgid, syscall.SIGKILL)
		}
	})

	// Read what it prints up to how to stop it.
	printed := make(chan string, 1)
	go func() {
		var out strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "Ctrl-C here stops") {
				printed <- out.String()
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		d.exited <- cmd.Wait()
		close(printed)
	}()
	select {
	case d.out = <-printed:
	case <-time.After(5 * time.Minute):
		t.Fatalf("the demo printed no steps in 5 minutes:\n%s", d.stderr.String())
	}
	if d.out == "" {
		t.Fatalf("the demo ended before printing its steps:\n%s", d.stderr.String())
	}
	return d
}

// interrupt stops the demo as Ctrl-C does, and checks that it ends with status 0 and leaves
// nothing running: no process, no listening port. A terminal sends SIGINT to the whole group;
// sending it to the script alone is the stricter check of the script: it must stop what it
// started itself. ctrlC sends it to the group.
func (d *runningDemo) interrupt(t *testing.T) {
	t.Helper()
	d.stop(t, d.pgid, func(err error) bool { return err == nil })
}

// ctrlC is Ctrl-C at a terminal: SIGINT to the demo's whole process group. ok judges how the
// command ended.
func (d *runningDemo) ctrlC(t *testing.T, ok func(error) bool) {
	t.Helper()
	d.stop(t, -d.pgid, ok)
}

func (d *runningDemo) stop(t *testing.T, to int, ok func(error) bool) {
	t.Helper()
	pgid, exited, stderr := d.pgid, d.exited, d.stderr
	procs := group(t, pgid)
	port, ghPort := d.port, d.ghPort

	d.stopped = true
	if err := syscall.Kill(to, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		// A stop asked for ends the script with 0, so that `make demo` prints no error.
		if !ok(err) {
			t.Errorf("the demo ended with %v on Ctrl-C:\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		t.Fatalf("the demo did not stop on Ctrl-C:\n%s", stderr.String())
	}
	if left := group(t, pgid); len(left) > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		t.Fatalf("left running after Ctrl-C: %v", left)
	}
	for pid, name := range procs {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("%s (pid %d) is still running", name, pid)
		}
	}
	for _, p := range []string{port, ghPort} {
		if c, err := net.Dial("tcp", "127.0.0.1:"+p); err == nil {
			c.Close()
			t.Errorf("port %s still answers", p)
		}
	}
	if _, err := os.Stat(filepath.Join(d.dir, "demo.lock")); !os.IsNotExist(err) {
		t.Errorf("the demo's lock is left (%v)", err)
	}
}

// group lists the live processes of a process group: pid → command name.
func group(t *testing.T, pgid int) map[int]string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces, so split after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 3 || fields[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid {
			out[pid] = string(stat[bytes.IndexByte(stat, '(')+1 : i])
		}
	}
	return out
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func readFile(parts ...string) string {
	b, _ := os.ReadFile(filepath.Join(parts...))
	return string(b)
}
