package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/sandbox"
)

// TestHostSandboxPerOS: `kiln agent` confines builds with bubblewrap by default on Linux and
// refuses to start when it cannot, naming the fix; on Windows it runs builds as a local account of
// their own by default and refuses to start when it cannot set it up; `kiln agent run` (a
// CodeBuild host), kiln's hosted EC2 Windows hosts and macOS agents default to off. An agent asked for bwrap where bubblewrap cannot run (Windows) refuses
// to start with a reason, rather than pretending to confine builds; unconfined, it says so at start.
func TestHostSandboxPerOS(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-bwrap")
	for _, tc := range []struct {
		name, goos, def string
		env             map[string]string
		wantErr         []string
		wantLog         string
		wantConfined    bool
	}{
		{name: "linux agent default is bwrap", goos: "linux", def: loopSandboxDefault("linux", false),
			wantConfined: true, wantLog: "builds run in a bubblewrap sandbox"},
		{name: "linux agent without bwrap refuses to start", goos: "linux", def: loopSandboxDefault("linux", false),
			env:     map[string]string{"KILN_BWRAP": missing},
			wantErr: []string{"bubblewrap sandbox", "not found", "apt-get install bubblewrap", "KILN_SANDBOX=off"}},
		{name: "linux agent off says so", goos: "linux", def: loopSandboxDefault("linux", false),
			env: map[string]string{"KILN_SANDBOX": "off", "KILN_BWRAP": missing}, wantLog: "builds run without a sandbox"},
		{name: "linux build host default is off", goos: "linux", def: sandboxOff, wantLog: "builds run without a sandbox"},
		{name: "no kiln variable passed to builds", goos: "linux", def: sandboxBwrap,
			env: map[string]string{"KILN_SANDBOX_ENV": "JAVA_HOME,KILN_AGENT_TOKEN"}, wantErr: []string{`"KILN_AGENT_TOKEN" cannot be passed`}},
		{name: "relative read-only directory", goos: "linux", def: sandboxBwrap,
			env: map[string]string{"KILN_SANDBOX_READONLY": "opt/sdk"}, wantErr: []string{"not an absolute path"}},
		{name: "windows bwrap refused", goos: "windows", def: sandboxOff, env: map[string]string{"KILN_SANDBOX": "bwrap"}, wantErr: []string{"needs Linux", "KILN_SANDBOX=account"}},
		{name: "darwin bwrap refused", goos: "darwin", def: sandboxOff, env: map[string]string{"KILN_SANDBOX": "bwrap"}, wantErr: []string{"needs Linux"}},
		{name: "windows off runs unconfined and says so", goos: "windows", def: sandboxOff, env: map[string]string{"KILN_SANDBOX": "off"},
			wantLog: "builds run without a sandbox"},
		{name: "linux ec2 host default is bwrap", goos: "linux", def: loopSandboxDefault("linux", true),
			wantConfined: true, wantLog: "builds run in a bubblewrap sandbox"},
		// This test runs on Linux, where the account cannot be set up: exactly what a Windows
		// agent that is not a LocalSystem service meets, and it must refuse to start.
		{name: "windows agent default is account, refused where it cannot be set up", goos: "windows", def: loopSandboxDefault("windows", false),
			wantErr: []string{"local account kiln-build", "KILN_SANDBOX=account", "LocalSystem", "KILN_SANDBOX=off"}},
		{name: "windows agent names its account", goos: "windows", def: loopSandboxDefault("windows", false),
			env: map[string]string{"KILN_BUILD_ACCOUNT": "ue-builds"}, wantErr: []string{"local account ue-builds", "LocalSystem"}},
		{name: "windows account name checked", goos: "windows", def: sandboxAccount,
			env: map[string]string{"KILN_BUILD_ACCOUNT": `studiouilds`}, wantErr: []string{"KILN_BUILD_ACCOUNT", "cannot"}},
		{name: "windows account cannot cut the network", goos: "windows", def: sandboxAccount,
			env: map[string]string{"KILN_SANDBOX_NETWORK": "none"}, wantErr: []string{"KILN_SANDBOX_NETWORK", "only host"}},
		{name: "windows account passes no kiln variable", goos: "windows", def: sandboxAccount,
			env: map[string]string{"KILN_SANDBOX_ENV": "KILN_AGENT_TOKEN"}, wantErr: []string{`"KILN_AGENT_TOKEN" cannot be passed`}},
		{name: "windows ec2 host default is off", goos: "windows", def: loopSandboxDefault("windows", true), wantLog: "builds run without a sandbox"},
		{name: "linux account refused", goos: "linux", def: sandboxBwrap, env: map[string]string{"KILN_SANDBOX": "account"},
			wantErr: []string{"for Windows", "use bwrap"}},
		{name: "darwin agent default is off", goos: "darwin", def: loopSandboxDefault("darwin", false), wantLog: "builds run without a sandbox"},
		{name: "unknown setting", goos: "windows", def: sandboxOff, env: map[string]string{"KILN_SANDBOX": "docker"}, wantErr: []string{"neither off, bwrap nor account"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			c, err := hostSandbox(context.Background(), tc.goos, tc.def, func(k string) string { return tc.env[k] },
				slog.New(slog.NewTextHandler(&logs, nil)), t.TempDir())
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("started with %T, want an error", c)
				}
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("err = %v, want one saying %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, unconfined := c.(sandbox.Unconfined)
			_, confined := c.(*sandbox.Bubblewrap)
			if confined != tc.wantConfined || unconfined == tc.wantConfined {
				t.Errorf("confiner %T, want confined %v", c, tc.wantConfined)
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
