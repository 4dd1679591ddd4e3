package codebuild

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBuildsBeyondTheLimitWaitQueued: with one slot, a second build waits in the QUEUED phase
// until the first ends, then runs; a build stopped while queued ends STOPPED without running.
func TestBuildsBeyondTheLimitWaitQueued(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	s, err := New(Config{Project: "p", Command: []string{"sh", "-c", `sleep 0.3; echo x >> "$MARKER"`}, Env: []string{"MARKER=" + marker},
		Dir: filepath.Join(dir, "builds"), MaxRunning: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, err := s.start(startBuildInput{ProjectName: "p"})
	if err != nil {
		t.Fatal(err)
	}
	second, _ := s.start(startBuildInput{ProjectName: "p"})
	third, _ := s.start(startBuildInput{ProjectName: "p"})
	time.Sleep(50 * time.Millisecond) // let the first take the slot
	got, _ := s.get([]string{first.ID, second.ID, third.ID})
	if got[0].CurrentPhase != "BUILD" || got[1].CurrentPhase != "QUEUED" || got[2].CurrentPhase != "QUEUED" {
		t.Fatalf("phases %s %s %s, want BUILD QUEUED QUEUED", got[0].CurrentPhase, got[1].CurrentPhase, got[2].CurrentPhase)
	}
	if b, err := s.stop(third.ID); err != nil || b.BuildStatus != StatusStopped {
		t.Fatalf("stop a queued build: %v %+v", err, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range []string{first.ID, second.ID} {
		if b, err := s.Wait(ctx, id); err != nil || b.BuildStatus != StatusSucceeded {
			t.Fatalf("build %s: %v %+v", id, err, b)
		}
	}
	data, _ := os.ReadFile(marker)
	if string(data) != "x\nx\n" {
		t.Fatalf("the builds ran %q times, want the first two once each", data)
	}
}
