package main

import (
	"io"
	"os"
	"runtime"
	"testing"
)

// terminal opens a pseudo-terminal for a command's output (skipping the test where it cannot)
// and reads it while the command writes, since a full pty would block it. Close the returned
// terminal side, then read: everything written to it.
func terminal(t *testing.T) (pts *os.File, read func() string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the pty is opened the Linux way")
	}
	ptm, pts, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(ptm) // ends with EIO once the terminal side is closed
		out <- string(b)
	}()
	return pts, func() string { return <-out }
}
