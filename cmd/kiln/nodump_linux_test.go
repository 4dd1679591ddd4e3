package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/syncbuf"
)

// nobody is the unprivileged user the agent and its stand-in build run as here.
const nobody = 65534

// TestAgentIsNotDumpable: the agent runs as an unprivileged user, and a process of that same user
// (an unconfined build) cannot read the running agent's /proc/<pid>/environ, where a token given
// in the environment would be; it can read an ordinary process's of that user (the control).
func TestAgentIsNotDumpable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running the agent as another user takes root; the test runs as root in make test")
	}
	// The agent's binary and engines where that user can reach them.
	base, err := os.MkdirTemp("", "kiln-nodump-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "kiln")
	copyFile(t, os.Args[0], bin, 0o755)
	enginesDir := filepath.Join(base, "engines")
	runUAT := filepath.Join(enginesDir, "5.4", "Engine", "Build", "BatchFiles", "RunUAT.sh")
	if err := os.MkdirAll(filepath.Dir(runUAT), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runUAT, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(work, nobody, nobody); err != nil {
		t.Fatal(err)
	}

	var claims atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims.Add(1)
		time.Sleep(100 * time.Millisecond)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer api.Close()
	asNobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	agent := exec.Command(bin, "agent", "--engines", enginesDir, "--workdir", work)
	agent.Env = []string{runAsKiln + "=1", "PATH=/usr/bin:/bin", "KILN_AGENT_URL=" + api.URL, "KILN_AGENT_TOKEN=" + testAgentToken, "KILN_SANDBOX=off"}
	agent.SysProcAttr, agent.Dir = asNobody, base
	var out syncbuf.Buffer
	agent.Stdout, agent.Stderr = &out, &out
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer stopKilnAgent(t, agent)
	ordinary := exec.Command("sleep", "60")
	ordinary.Env, ordinary.SysProcAttr = []string{"PROBE=1"}, asNobody
	if err := ordinary.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ordinary.Process.Kill(); _ = ordinary.Wait() }()
	for deadline := time.Now().Add(time.Minute); claims.Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent never claimed:\n%s", out.String())
		}
	}
	read := func(pid int) ([]byte, error) {
		cat := exec.Command("cat", "/proc/"+strconv.Itoa(pid)+"/environ")
		cat.SysProcAttr = asNobody
		return cat.CombinedOutput()
	}
	if out, err := read(ordinary.Process.Pid); err != nil {
		t.Fatalf("control: the user cannot read its own ordinary process's environment: %v %s", err, out)
	}
	if got, err := read(agent.Process.Pid); err == nil {
		t.Fatalf("a process of the agent's user read the agent's environment (%d bytes)", len(got))
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
