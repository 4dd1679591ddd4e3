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
// thread of its own the child would be killed then. Several children, each started from such a
// goroutine: Go never ends the process's main thread, which one of them may happen to run on.
func TestKillWithParentOutlivesTheStartingThread(t *testing.T) {
	const children = 6
	waited := make(chan error, children)
	for range children {
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
		go func() { waited <- cmd.Wait() }()
		t.Cleanup(func() {
			_ = tree.Kill()
			_ = tree.Close()
		})
	}
	select {
	case err := <-waited:
		t.Fatalf("a child ended when the thread that started it did: %v", err)
	case <-time.After(time.Second):
	}
}
