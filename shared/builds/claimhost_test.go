package builds

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestClaimHostRecordsTheCredential: a remote claim records the host and the credential's hash
// with the move to running; the same host claiming again replaces the hash (only the last
// credential works); another host, an ended build and a claim without a credential are refused
// and change nothing.
func TestClaimHostRecordsTheCredential(t *testing.T) {
	ctx := context.Background()
	w := newLifecycleWorld(t)
	b := w.build(t, kiln.StatusPending)
	got, err := w.lc.ClaimHost(ctx, w.org, b.ID, "codebuild", "hash-1", 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != kiln.StatusRunning || got.Host != "codebuild" || got.HostCredentialHash != "hash-1" || got.HeartbeatAt == nil || !got.HeartbeatAt.Equal(got.StartedAt.Add(10*time.Minute)) {
		t.Fatalf("claimed: %+v", got)
	}
	if _, err := w.lc.ClaimHost(ctx, w.org, b.ID, "codebuild", "hash-2", 0); err != nil {
		t.Fatalf("the same host claiming again: %v", err)
	}
	if s := w.status(t, b.ID); s.HostCredentialHash != "hash-2" || s.Host != "codebuild" {
		t.Fatalf("after the repeated claim: host %q hash %q, want codebuild and hash-2", s.Host, s.HostCredentialHash)
	}
	for _, tt := range []struct {
		name, host, hash, code string
	}{
		{"another host", "agent-7", "hash-3", kiln.EInvalidState},
		{"no credential", "codebuild", "", kiln.EValidation},
		{"no host", "", "hash-3", kiln.EValidation},
	} {
		if _, err := w.lc.ClaimHost(ctx, w.org, b.ID, tt.host, tt.hash, 0); kiln.ErrorCode(err) != tt.code {
			t.Errorf("%s: got %v, want %s", tt.name, err, tt.code)
		}
	}
	if s := w.status(t, b.ID); s.HostCredentialHash != "hash-2" {
		t.Fatalf("a refused claim changed the hash to %q", s.HostCredentialHash)
	}
	if ev := w.events.of(b.ID); len(ev) != 1 || ev[0] != "pending→running" {
		t.Fatalf("events %v, want only pending→running", ev)
	}
	if _, err := w.lc.Fail(ctx, w.org, b.ID, "boom"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.lc.ClaimHost(ctx, w.org, b.ID, "codebuild", "hash-4", 0); kiln.ErrorCode(err) != kiln.EInvalidState {
		t.Fatalf("claiming an ended build: %v, want invalid_state", err)
	}
}
