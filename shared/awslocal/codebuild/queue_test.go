package codebuild

import (
	"context"
	"errors"
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

// TestStartBuildPastTheQuotaIsRefused: with a concurrent-builds quota of 2, a third StartBuild
// while two are in progress (one running, one queued) is refused with
// AccountLimitExceededException and runs nothing; once one ends, a StartBuild is taken again.
func TestStartBuildPastTheQuotaIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Config{Project: "p", Command: []string{"sh", "-c", "sleep 0.3"}, Dir: filepath.Join(dir, "builds"), MaxRunning: 1, Quota: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, err := s.start(startBuildInput{ProjectName: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.start(startBuildInput{ProjectName: "p"}); err != nil {
		t.Fatal(err)
	}
	_, err = s.start(startBuildInput{ProjectName: "p"})
	var ae *apiError
	if !errors.As(err, &ae) || ae.Type != "AccountLimitExceededException" || ae.status != 400 {
		t.Fatalf("a StartBuild past the quota: %v, want AccountLimitExceededException (400)", err)
	}
	if s.Refused() != 1 || len(s.builds) != 2 {
		t.Errorf("refused %d, builds %d; want 1 refused and 2 builds", s.Refused(), len(s.builds))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Wait(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) { // its slot frees just after its end
		_, err := s.start(startBuildInput{ProjectName: "p"})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a StartBuild once a build ended: %v", err)
		}
	}
}
