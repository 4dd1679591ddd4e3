package e2e

import (
	"strings"
	"testing"
	"time"
)

// waitLastLine polls a build's log until its last line holds want (or fails after a minute).
func (w *World) WaitLastLine(t *testing.T, id, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		lines := strings.Split(strings.TrimRight(w.LogText(t, id), "\n"), "\n")
		last := lines[len(lines)-1]
		if strings.Contains(last, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s: last log line %q, want one with %q", id, last, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
