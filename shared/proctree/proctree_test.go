package proctree

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary is its own child and grandchild: PROCTREE_HELPER=parent starts a grandchild
// (PROCTREE_HELPER=sleeper) as a plain child, prints its pid, then sleeps (or, with "parent-exit",
// exits at once and leaves it behind).
func TestMain(m *testing.M) {
	switch os.Getenv("PROCTREE_HELPER") {
	case "sleeper":
		time.Sleep(time.Hour)
		os.Exit(0)
	case "parent", "parent-exit":
		self, _ := os.Executable()
		child := exec.Command(self)
		child.Env = append(os.Environ(), "PROCTREE_HELPER=sleeper")
		if err := child.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println(child.Process.Pid)
		if os.Getenv("PROCTREE_HELPER") == "parent" {
			time.Sleep(time.Hour)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helper is a command that runs the test binary as PROCTREE_HELPER=mode.
func helper(t *testing.T, ctx context.Context, mode string) (*exec.Cmd, io.Reader) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	if ctx != nil {
		cmd = exec.CommandContext(ctx, self)
	}
	cmd.Env = append(os.Environ(), "PROCTREE_HELPER="+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// grandchild reads the pid the helper printed.
func grandchild(t *testing.T, out io.Reader) int {
	t.Helper()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read the grandchild's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	return pid
}

// waitGone waits until process pid is no longer running, and fails the test if it still runs
// after a generous while. It kills the process in the end either way.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); running(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
			t.Fatalf("process %d, started by the tree's child, is still running", pid)
		}
	}
}

func TestKillEndsTheWholeTree(t *testing.T) {
	cmd, out := helper(t, nil, "parent")
	tree := New(cmd, Options{})
	if err := tree.Start(); err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	pid := grandchild(t, out)
	if !running(pid) {
		t.Fatalf("grandchild %d is not running before the kill", pid)
	}
	if err := tree.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the killed child exited successfully")
	}
	waitGone(t, pid)
}

func TestKillAfterExitEndsLeftovers(t *testing.T) {
	cmd, out := helper(t, nil, "parent-exit")
	tree := New(cmd, Options{})
	if err := tree.Start(); err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	pid := grandchild(t, out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if !running(pid) {
		t.Fatalf("grandchild %d is not running after its parent exited", pid)
	}
	_ = tree.Kill()
	waitGone(t, pid)
}

func TestRunKillsTheWholeTreeWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd, out := helper(t, ctx, "parent")
	done := make(chan error, 1)
	go func() { done <- Run(cmd, Options{}) }()
	pid := grandchild(t, out)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("Run of a cancelled command returned no error")
	}
	waitGone(t, pid)
}

func TestStartFailure(t *testing.T) {
	cmd := exec.Command("kiln-proctree-no-such-program")
	if err := New(cmd, Options{}).Start(); err == nil {
		t.Fatal("a missing program started")
	}
	if err := Run(exec.Command("kiln-proctree-no-such-program"), Options{}); err == nil {
		t.Fatal("Run of a missing program returned no error")
	}
}
