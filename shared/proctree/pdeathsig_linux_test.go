package proctree

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// TestKillWithParentOutlivesTheStartingThread: a KillWithParent child keeps running when the OS
// thread of the goroutine that started it ends (Go ends a thread whose goroutine exits locked to
// it, as the sandbox's namespace setup does); Pdeathsig follows the forking thread, so without a
// thread of its own the child would be killed then.
func TestKillWithParentOutlivesTheStartingThread(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	tree := New(cmd, Options{KillWithParent: true})
	started := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: this thread ends with the goroutine
		started <- tree.Start()
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = tree.Kill()
		<-waited
		_ = tree.Close()
	})
	select {
	case err := <-waited:
		t.Fatalf("the child ended when the thread that started it did: %v", err)
	case <-time.After(time.Second):
	}
}
