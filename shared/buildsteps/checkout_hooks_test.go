package buildsteps

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckoutObeysNothingTheBuildLeftInGit plants what a build could leave in its workspace's
// repository to run code as kiln at the next checkout: hooks, and config that names programs
// (core.fsmonitor, core.hooksPath). The next checkout runs none of them. (Builds also see .git
// read-only in the sandbox; this is the second wall.)
func TestCheckoutObeysNothingTheBuildLeftInGit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.repo.Commit("main", "First", "Ada Lovelace", projectFiles("v1", nil))
	ws := filepath.Join(t.TempDir(), "ws")
	ctx := context.Background()
	if _, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: f.source("main", "")}, &recorder{}); err != nil {
		t.Fatal(err)
	}

	ran := filepath.Join(t.TempDir(), "ran")
	evil := filepath.Join(t.TempDir(), "evil.sh")
	script := "#!/bin/sh\necho \"$0 $*\" >> " + ran + "\n"
	if err := os.WriteFile(evil, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(ws, ".git", "hooks")
	os.MkdirAll(hooks, 0o755)
	for _, h := range []string{"post-checkout", "pre-auto-gc", "reference-transaction", "post-merge", "post-rewrite"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	otherHooks := filepath.Join(ws, "hooks-elsewhere")
	os.MkdirAll(otherHooks, 0o755)
	os.WriteFile(filepath.Join(otherHooks, "post-checkout"), []byte(script), 0o755)
	gitOut(t, ws, "config", "core.fsmonitor", evil)

	f.repo.Commit("main", "Second", "Ada Lovelace", projectFiles("v2", nil))
	if _, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: f.source("main", "")}, &recorder{}); err != nil {
		t.Fatal(err)
	}
	gitOut(t, ws, "config", "--unset", "core.fsmonitor")
	gitOut(t, ws, "config", "core.hooksPath", otherHooks)
	f.repo.Commit("main", "Third", "Ada Lovelace", projectFiles("v3", nil))
	if _, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: f.source("main", "")}, &recorder{}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(ran); err == nil {
		t.Fatalf("kiln's checkout ran what the workspace's repository named:\n%s", data)
	}
}
