package limits

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/syncbuf"
	"github.com/kilnbuild/kiln/shared/tcptest"
)

// probeScript is tenant code: the stand-in engine sources a project's FakeUAT.env, as Unreal runs a
// project's build rules. Each probe prints "PROBE <name>=yes" when the build can do it. api is
// kiln's own API and loopback another listener on the host's 127.0.0.1 (host:port).
func probeScript(cfg serve.Config, api, loopback string) string {
	engine := filepath.Join(cfg.Engines, "5.3")
	connect := func(hostPort string) string {
		host, port, _ := strings.Cut(hostPort, ":")
		return `timeout 5 bash -c 'exec 3<>/dev/tcp/` + host + `/` + port + `'`
	}
	return strings.Join([]string{
		`can() { if eval "$2" >/dev/null 2>&1; then echo "PROBE $1=yes"; else echo "PROBE $1=no"; fi; }`,
		`can read-master-key "cat '` + filepath.Join(cfg.Data, serve.MasterKeyFile) + `'"`,
		`can read-database "test -r '` + filepath.Join(cfg.Data, serve.DatabaseFile) + `'"`,
		`can list-logs "ls '` + filepath.Join(cfg.Data, "logs") + `'"`,
		`can list-artifacts "ls '` + filepath.Join(cfg.Data, "artifacts") + `'"`,
		`can read-github-app-key "cat '` + cfg.GitHubAppKey + `'"`,
		`can write-engine "touch '` + engine + `/tampered'"`,
		`kiln_environ() { for c in /proc/[0-9]*/cmdline; do if grep -qa -- '-test.' "$c"; then cat "${c%/cmdline}/environ" | grep -qa PATH= && return 0; fi; done; return 1; }`,
		`can read-kiln-environment kiln_environ`,
		`can see-kiln-process "grep -qa -- '-test.' /proc/[0-9]*/cmdline"`,
		`can write-workspace "touch ./probe-was-here"`,
		`can write-git-hooks "touch ./.git/hooks/post-checkout"`,
		`can write-home "touch \"$HOME/probe\""`,
		`can reach-kiln-api "` + connect(api) + `"`,
		`can reach-host-loopback "` + connect(loopback) + `"`,
		`can write-proc-sys "cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern"`,
		`can run-as-uid-0 "test $(id -u) = 0"`,
		``,
	}, "\n")
}

func probeResults(log string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(log, "\n") {
		if _, rest, ok := strings.Cut(line, "PROBE "); ok {
			name, value, _ := strings.Cut(strings.TrimSpace(rest), "=")
			got[name] = value
		}
	}
	return got
}

// TestBuildsRunInASandbox runs a build whose own code tries to reach kiln's keys, database, other
// builds' data, the GitHub App key, kiln's processes and environment, and the engine; in the
// sandbox it reaches none of them, and with KILN_SANDBOX=off (the control) it reaches them all.
func TestBuildsRunInASandbox(t *testing.T) {
	t.Parallel()
	loopback := tcptest.Serve(t, func(c net.Conn) { c.Close() }) // a service on the host a build must not reach
	// Run as root (as kiln's build hosts run it), an unconfined build still runs as a build uid:
	// it cannot read what only root can, and cannot write .git or /proc/sys.
	root := os.Geteuid() == 0
	off := map[string]string{
		"read-master-key": "yes", "read-database": "yes", "list-logs": "yes", "list-artifacts": "yes",
		"read-github-app-key": "yes", "write-engine": "yes", "read-kiln-environment": "yes", "see-kiln-process": "yes",
		"write-workspace": "yes", "write-home": "yes", "write-git-hooks": "yes", "reach-kiln-api": "yes",
		"reach-host-loopback": "yes", "write-proc-sys": "yes", "run-as-uid-0": "yes",
	}
	if root {
		for _, name := range []string{"read-master-key", "read-database", "list-logs", "list-artifacts", "read-github-app-key",
			"write-engine", "read-kiln-environment", "write-git-hooks", "write-proc-sys", "run-as-uid-0"} {
			off[name] = "no"
		}
	}
	for _, tc := range []struct {
		mode string
		want map[string]string
	}{
		{"bwrap", map[string]string{
			"read-master-key": "no", "read-database": "no", "list-logs": "no", "list-artifacts": "no",
			"read-github-app-key": "no", "write-engine": "no", "read-kiln-environment": "no", "see-kiln-process": "no",
			"write-workspace": "yes", "write-home": "yes", "write-git-hooks": "no", "reach-kiln-api": "no",
			"reach-host-loopback": "no", "write-proc-sys": "no", "run-as-uid-0": "no",
		}},
		{"off", off},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.Sandbox = tc.mode })
			pid := w.AddShooter(t)
			// A first build, so that logs and artifacts exist to be reached for.
			sid := w.AddSetting(t, pid, nil)["id"].(string)
			if b := w.WaitEnded(t, w.Trigger(t, pid, sid, "")); b["status"] != "complete" {
				t.Fatalf("first build: %v", b)
			}
			api := strings.TrimPrefix(w.URL(), "http://")
			w.Shooter.Commit("probe", "Probe the build host", "Mallory", map[string]string{"Shooter/FakeUAT.env": probeScript(w.Config, api, loopback)})
			probe := w.AddSetting(t, pid, map[string]any{"branch": "probe"})["id"].(string)
			id := w.Trigger(t, pid, probe, "")
			if b := w.WaitEnded(t, id); b["status"] != "complete" {
				t.Fatalf("probe build: %v\n%s", b, w.LogText(t, id))
			}
			log := w.LogText(t, id)
			got := probeResults(log)
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("%s: %s = %q, want %q", tc.mode, name, got[name], want)
				}
			}
			// What the build wrote is, as the host sees it, a build uid's: not root's.
			if root {
				owner := e2e.OwnerOf(t, w.Config.Data, "probe-was-here")
				if r := w.Config.BuildUIDs; owner < r.First || owner > r.Last {
					t.Errorf("%s: the file the build wrote is owned by host uid %d, want one of KILN_BUILD_UIDS %s", tc.mode, owner, r)
				}
			}
			if t.Failed() {
				t.Logf("log:\n%s", log)
			}
		})
	}
}

func TestBuildsFailWhenTheSandboxIsUnavailable(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.Bwrap = filepath.Join(t.TempDir(), "no-bwrap") })
	if !strings.Contains(w.Logs.String(), "builds will fail until the build sandbox works") {
		t.Errorf("the service did not say at start that builds will fail:\n%s", w.Logs.String())
	}
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	b := w.WaitEnded(t, id)
	reason := fmt.Sprint(b["failureReason"])
	if b["status"] != "failed" || !strings.Contains(reason, "build sandbox unavailable") ||
		!strings.Contains(reason, "apt-get install bubblewrap") || !strings.Contains(reason, "KILN_SANDBOX=off") {
		t.Fatalf("build without bwrap: %v", b)
	}
	if strings.Contains(w.LogText(t, id), "COMMAND STARTED") {
		t.Error("the engine ran although the sandbox was unavailable")
	}
}

func TestSandboxOffRefusesSeveralOrganizations(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.Sandbox = "off" })
	if !strings.Contains(w.Logs.String(), "KILN_SANDBOX=off: builds run without a sandbox") {
		t.Errorf("no warning at start:\n%s", w.Logs.String())
	}
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	if b := w.WaitEnded(t, w.Trigger(t, pid, sid, "")); b["status"] != "complete" {
		t.Fatalf("one organization, sandbox off: %v", b)
	}

	// A second organization appears beside the running service: builds refuse to run unconfined.
	e2e.BootstrapOrg(t, w.Server, "Other Studio")
	b := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	if b["status"] != "failed" || !strings.Contains(fmt.Sprint(b["failureReason"]), "holds 2 organizations") {
		t.Fatalf("unconfined build with two organizations: %v", b)
	}

	// On restart the service refuses to start, naming the two ways out.
	if err := w.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := serve.Start(context.Background(), w.Config, &syncbuf.Buffer{}, e2e.DiscardLogger())
	if err == nil || !strings.Contains(err.Error(), "KILN_SANDBOX_OFF_I_TRUST_EVERY_ORGANIZATION=1") || !strings.Contains(err.Error(), "KILN_SANDBOX=bwrap") {
		t.Fatalf("start with sandbox off and two organizations: %v", err)
	}

	// Confirmed: it starts, and builds run.
	token := w.Token
	w.Config.SandboxOffConfirmed = true
	w.Server = e2e.StartService(t, e2e.Serve, w.Config)
	w.Token = token
	if b := w.WaitEnded(t, w.Trigger(t, pid, sid, "")); b["status"] != "complete" {
		t.Fatalf("sandbox off, confirmed: %v", b)
	}
}
