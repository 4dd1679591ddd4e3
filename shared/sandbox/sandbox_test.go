package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// bwrapForTest opens the real bubblewrap; the tests fail (not skip) without it, as builds would.
func bwrapForTest(t *testing.T, b Bubblewrap) Confiner {
	t.Helper()
	c, err := Open(context.Background(), b)
	if err != nil {
		t.Fatalf("bubblewrap is needed for kiln's build sandbox (make deps installs it): %v", err)
	}
	return c
}

// layout is a host as a build sees it: an engine, this build's directories, and what it must not
// reach (another tenant's workspace, kiln's keys).
type layout struct {
	engine, workspace, archive, scratch, secretDir, secret string
}

func newLayout(t *testing.T) layout {
	root := t.TempDir()
	l := layout{
		engine: filepath.Join(root, "engines", "5.3"), workspace: filepath.Join(root, "data", "workspaces", "org1", "p", "b"),
		archive: filepath.Join(root, "data", "staging", "b1", "archive"), scratch: filepath.Join(root, "data", "staging", "b1", "scratch"),
		secretDir: filepath.Join(root, "data", "keys"),
	}
	l.secret = filepath.Join(l.secretDir, "master.key")
	for _, d := range []string{l.engine, l.workspace, l.archive, l.scratch + "/home", l.scratch + "/tmp", l.secretDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(l.secret, []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.engine, "engine.txt"), []byte("engine"), 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l layout) jail() Jail {
	return Jail{ReadOnly: []string{l.engine}, Writable: []string{l.workspace, l.archive, l.scratch},
		Dir: l.workspace, Home: l.scratch + "/home", Tmp: l.scratch + "/tmp"}
}

// run runs a shell script in the jail and returns its output, failing the test if it fails.
func run(t *testing.T, c Confiner, j Jail, script string) string {
	t.Helper()
	out, err := runStep(c, j, "/bin/sh", "-c", script)
	if err != nil {
		t.Fatalf("script failed: %v\n%s", err, out)
	}
	return out
}

// runStep runs a program in the jail as kiln's callers do (Prepare, Start, Wait, Done) and returns
// its combined output.
func runStep(c Confiner, j Jail, path string, args ...string) (string, error) {
	step, err := c.Prepare(j, path, args...)
	if err != nil {
		return "", err
	}
	defer step.Done()
	var out bytes.Buffer
	step.Cmd.Stdout, step.Cmd.Stderr = &out, &out
	if err := step.Start(step.Cmd.Start); err != nil {
		return "", err
	}
	err = step.Cmd.Wait()
	return out.String(), err
}

func TestBubblewrapConfinesTheBuild(t *testing.T) {
	t.Setenv("KILN_GITHUB_CLIENT_SECRET", "kiln-secret-value")
	l := newLayout(t)
	c := bwrapForTest(t, Bubblewrap{})
	// Each probe prints "<name>=yes" when the build can do it.
	script := `
can() { if eval "$2" >/dev/null 2>&1; then echo "$1=yes"; else echo "$1=no"; fi; }
can read-secret "cat ` + l.secret + `"
can see-keys-dir "ls ` + l.secretDir + `"
can read-engine "cat ` + l.engine + `/engine.txt"
can write-engine "touch ` + l.engine + `/x"
can write-workspace "touch ` + l.workspace + `/built"
can write-archive "touch ` + l.archive + `/built"
can write-home "touch $HOME/built"
can write-tmpdir "touch $TMPDIR/built"
can write-usr "touch /usr/x"
can read-shadow "cat /etc/shadow"
can read-root-home "ls /root"
echo "uid=$(id -u) user=$(id -un) home=$HOME"
echo "pids=$(ls /proc | grep -c '^[0-9]')"
echo "env-secret=$(cat /proc/1/environ /proc/self/environ | tr '\0' '\n' | grep -c kiln-secret-value)"
echo "env-kiln=$(env | grep -c '^KILN_')"
echo "hostname=$(cat /proc/sys/kernel/hostname)"
`
	out := run(t, c, l.jail(), script)
	t.Log(out)
	for _, want := range []string{
		"read-secret=no", "see-keys-dir=no", "read-engine=yes", "write-engine=no", "write-workspace=yes",
		"write-archive=yes", "write-home=yes", "write-tmpdir=yes", "write-usr=no", "read-shadow=no", "read-root-home=no",
		"uid=1000 user=build home=" + l.scratch + "/home", "env-secret=0", "env-kiln=0", "hostname=kiln-build",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("sandbox probe: want %q in:\n%s", want, out)
		}
	}
	// Only the sandbox's own processes: bwrap's init, sh, and the probe's pipeline.
	if n := probeValue(out, "pids"); n > 6 {
		t.Errorf("the build sees %d processes; want only its own:\n%s", n, out)
	}
	if _, err := os.Stat(filepath.Join(l.workspace, "built")); err != nil {
		t.Errorf("a file the build wrote in its workspace is not there: %v", err)
	}
}

func TestBubblewrapNetwork(t *testing.T) {
	l := newLayout(t)
	for _, tc := range []struct {
		name    string
		network Network
		onlyLo  bool
	}{
		{"none by default", "", true},
		{"none", NetworkNone, true},
		{"host's when asked", NetworkHost, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := bwrapForTest(t, Bubblewrap{Network: tc.network})
			out := run(t, c, l.jail(), `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' '`)
			host, err := os.ReadFile("/proc/net/dev")
			if err != nil {
				t.Fatal(err)
			}
			hostIfaces := strings.Count(string(host), ":")
			got := strings.Fields(out)
			if tc.onlyLo && (len(got) != 1 || got[0] != "lo") {
				t.Errorf("interfaces %v, want only lo", got)
			}
			if !tc.onlyLo && len(got) != hostIfaces {
				t.Errorf("interfaces %v, want the host's %d", got, hostIfaces)
			}
		})
	}
}

func TestBubblewrapPassesOnlyNamedVariables(t *testing.T) {
	t.Setenv("ANDROID_HOME", "/opt/android")
	t.Setenv("JAVA_HOME", "/opt/jdk")
	l := newLayout(t)
	c := bwrapForTest(t, Bubblewrap{PassEnv: []string{"ANDROID_HOME", "NOT_SET_ANYWHERE"}})
	j := l.jail()
	j.Env = []string{"UE-LocalDataCachePath=" + l.workspace + "/DerivedDataCache"}
	out, err := runStep(c, j, "/usr/bin/env") // not through sh, which drops names such as UE-LocalDataCachePath
	if err != nil {
		t.Fatalf("env: %v\n%s", err, out)
	}
	if !strings.Contains(out, "ANDROID_HOME=/opt/android\n") || strings.Contains(out, "JAVA_HOME") || strings.Contains(out, "NOT_SET_ANYWHERE") ||
		!strings.Contains(out, "UE-LocalDataCachePath="+l.workspace+"/DerivedDataCache\n") {
		t.Errorf("environment:\n%s", out)
	}
}

func TestOpenWithoutBwrapFailsBuildsWithTheFix(t *testing.T) {
	c, err := Open(context.Background(), Bubblewrap{Path: filepath.Join(t.TempDir(), "no-bwrap")})
	if err == nil {
		t.Fatal("Open found a bwrap that does not exist")
	}
	_, err = c.Prepare(Jail{}, "/bin/true")
	if err == nil {
		t.Fatal("an unavailable sandbox returned a command")
	}
	for _, want := range []string{"build sandbox unavailable", "apt-get install bubblewrap", "KILN_SANDBOX=off"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("reason %q does not say %q", err, want)
		}
	}
}

func TestOpenWithABrokenBwrap(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "bwrap")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Open(context.Background(), Bubblewrap{Path: fake})
	if err == nil {
		t.Fatal("Open accepted a bwrap that cannot make a sandbox")
	}
	_, err = c.Prepare(Jail{}, "/bin/true")
	if err == nil || !strings.Contains(err.Error(), "No permissions to creating new namespace") {
		t.Errorf("reason %v does not carry bwrap's cause", err)
	}
}

func TestUnconfined(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/root", "KILN_GITHUB_CLIENT_SECRET=s", "AWS_SECRET_ACCESS_KEY=s", "P4PASSWD=s",
		"GITHUB_TOKEN=s", "GIT_CONFIG_COUNT=1", "GIT_DIR=/elsewhere", "GIT_TRACE_CURL=1", "GIT_ASKPASS=/x", "SSH_ASKPASS=/x",
		"GIT_SSL_CAINFO=/ca.pem", "LC_ALL=de_DE.UTF-8", "FAKE_UAT_SLEEP=1"}
	if got, want := strings.Join(hostEnv(environ), " "),
		"PATH=/bin HOME=/root GIT_DIR=/elsewhere GIT_TRACE_CURL=1 GIT_ASKPASS=/x SSH_ASKPASS=/x GIT_SSL_CAINFO=/ca.pem LC_ALL=de_DE.UTF-8 FAKE_UAT_SLEEP=1"; got != want {
		t.Errorf("hostEnv:\n got %s\nwant %s", got, want)
	}
	refused := &Error{Reason: "no"}
	if _, err := (Unconfined{Allow: func() error { return refused }}).Prepare(Jail{Dir: "/"}, "/bin/true"); err != refused {
		t.Errorf("Allow's refusal: got %v", err)
	}
	if out, err := runStep(Unconfined{}, Jail{Dir: "/tmp"}, "/bin/echo", "hi"); err != nil || out != "hi\n" {
		t.Errorf("unconfined run: %q %v", out, err)
	}
}

func probeValue(out, key string) int {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return -1
}

// TestBubblewrapNeedsLinux: elsewhere Open fails builds with the reason instead of looking for bwrap.
func TestBubblewrapNeedsLinux(t *testing.T) {
	if err := Supported("linux"); err != nil {
		t.Errorf("linux: %v", err)
	}
	for _, goos := range []string{"windows", "darwin", "freebsd"} {
		err := Supported(goos)
		if err == nil || !strings.Contains(err.Error(), "needs Linux") || !strings.Contains(err.Error(), "KILN_SANDBOX=off") {
			t.Errorf("%s: err = %v, want one saying it needs Linux and naming KILN_SANDBOX=off", goos, err)
		}
	}
}
