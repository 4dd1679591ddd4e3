package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// TestAgentAccountSandboxNeedsLocalSystem: on Windows, kiln agent's default sandbox runs builds
// as a local account of their own; an agent that is not a LocalSystem service cannot set it up
// and refuses to start, naming the privilege it lacks and the fix, rather than run builds as
// its own account.
func TestAgentAccountSandboxNeedsLocalSystem(t *testing.T) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		t.Fatal(err)
	}
	if u.User.Sid.IsWellKnown(windows.WinLocalSystemSid) {
		t.Skip("runs as LocalSystem, which can set the account up (shared/sandbox's TestAccountBuildCannotReachTheAgent covers it)")
	}
	var logs bytes.Buffer
	c, err := hostSandbox(context.Background(), "windows", loopSandboxDefault("windows", false), func(string) string { return "" },
		slog.New(slog.NewTextHandler(&logs, nil)), t.TempDir())
	if err == nil {
		t.Fatalf("started with %T as %s, want a refusal", c, u.User.Sid)
	}
	for _, want := range []string{"SeAssignPrimaryTokenPrivilege", "LocalSystem", "KILN_SANDBOX=off"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want one saying %q", err, want)
		}
	}
}
