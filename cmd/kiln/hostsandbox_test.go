package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/sandbox"
)

// TestHostSandboxPerOS: an agent asked for bwrap where bubblewrap cannot run (Windows) refuses to
// start with a reason, rather than pretending to confine builds; unconfined, it says so at start.
func TestHostSandboxPerOS(t *testing.T) {
	for _, tc := range []struct {
		name, goos, setting string
		wantErr, wantLog    string
	}{
		{name: "windows bwrap refused", goos: "windows", setting: "bwrap", wantErr: "needs Linux"},
		{name: "darwin bwrap refused", goos: "darwin", setting: "bwrap", wantErr: "needs Linux"},
		{name: "windows off runs unconfined and says so", goos: "windows", setting: "off", wantLog: "builds run without a sandbox"},
		{name: "windows default is off", goos: "windows", setting: "", wantLog: "builds run without a sandbox"},
		{name: "linux off says so too", goos: "linux", setting: "off", wantLog: "builds run without a sandbox"},
		{name: "unknown setting", goos: "windows", setting: "docker", wantErr: "neither off nor bwrap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			getenv := func(k string) string {
				if k == "KILN_SANDBOX" {
					return tc.setting
				}
				return ""
			}
			c, err := hostSandbox(context.Background(), tc.goos, getenv, slog.New(slog.NewTextHandler(&logs, nil)))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := c.(sandbox.Unconfined); !ok {
				t.Errorf("confiner %T, want sandbox.Unconfined", c)
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("start log %q does not say %q", logs.String(), tc.wantLog)
			}
		})
	}
}

func TestAWSLocalNeedsLinux(t *testing.T) {
	if err := awsLocalSupported("linux"); err != nil {
		t.Errorf("linux: %v", err)
	}
	for _, goos := range []string{"windows", "darwin"} {
		if err := awsLocalSupported(goos); err == nil || !strings.Contains(err.Error(), "needs Linux") {
			t.Errorf("%s: err = %v, want one saying it needs Linux", goos, err)
		}
	}
	// The command itself refuses before reading any setting on such a system; on Linux the check passes.
	var stderr bytes.Buffer
	err := awsLocal(context.Background(), []string{"--no-such-flag"}, func(string) string { return "" }, &stderr, &stderr)
	if err != nil && strings.Contains(err.Error(), "needs Linux") {
		t.Errorf("aws-local refused on linux: %v", err)
	}
}
