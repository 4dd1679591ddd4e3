//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/kilnbuild/kiln/shared/tcptest"
)

// asRoot fails the test unless it runs as root: kiln's build hosts run it as root, and these
// tests are about what it then does.
func asRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: what kiln does as root")
	}
}

func fileUID(t *testing.T, path string) int {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Sys().(*syscall.Stat_t).Uid)
}

// treeIDs returns, for pid and each of its descendants, its host uid (/proc's Uid line, its real
// uid) and its user namespace's uid_map as the host sees it.
func treeIDs(t *testing.T, pid int) map[int][2]string {
	t.Helper()
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	out := map[int][2]string{}
	var walk func(int)
	walk = func(p int) {
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		uidMap, _ := os.ReadFile(fmt.Sprintf("/proc/%d/uid_map", p))
		uid := ""
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				uid = strings.Fields(v)[0]
			}
		}
		out[p] = [2]string{uid, strings.Join(strings.Fields(string(uidMap)), " ")}
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return out
}

// TestBuildsNeverRunAsHostRoot: as root, bwrap and unconfined steps run as a build uid of the
// range, every process of the step as the host sees it; no user namespace of the sandbox maps
// anything to host uid 0; files they write are the build uid's; .git stays root's.
func TestBuildsNeverRunAsHostRoot(t *testing.T) {
	asRoot(t)
	uids := UIDRange{First: 231000, Last: 231009}
	for _, tc := range []struct {
		name string
		c    Confiner
	}{
		{"bubblewrap", bwrapForTest(t, Bubblewrap{UIDs: uids})},
		{"unconfined", Unconfined{UIDs: uids}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayout(t)
			git := filepath.Join(l.workspace, ".git")
			if err := os.MkdirAll(git, 0o755); err != nil {
				t.Fatal(err)
			}
			j := l.jail()
			j.Protected = []string{git}
			step, err := tc.c.Prepare(j, "/bin/sh", "-c", `touch built $HOME/h $TMPDIR/t && echo wrote; touch .git/hook 2>/dev/null && echo wrote-git; echo ready; read x; true`)
			if err != nil {
				t.Fatal(err)
			}
			defer step.Done()
			stdin, _ := step.Cmd.StdinPipe()
			stdout, _ := step.Cmd.StdoutPipe()
			if err := step.Start(step.Cmd.Start); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			buf := make([]byte, 4096)
			for !strings.Contains(out.String(), "ready\n") {
				n, err := stdout.Read(buf)
				out.Write(buf[:n])
				if err != nil {
					t.Fatalf("step: %v\n%s", err, out.String())
				}
			}
			ids := treeIDs(t, step.Cmd.Process.Pid)
			stdin.Close()
			if err := step.Cmd.Wait(); err != nil {
				t.Fatalf("step: %v\n%s", err, out.String())
			}
			t.Logf("%s host view (pid: uid, uid_map): %v", out.String(), ids)
			if inNS := strings.Count(fmt.Sprint(ids), " 1000 "); inNS < 1 && tc.name == "bubblewrap" {
				t.Errorf("saw only %d processes of the sandbox", len(ids))
			}
			for pid, id := range ids {
				if u, _ := strconv.Atoi(id[0]); !uids.contains(u) {
					t.Errorf("process %d of the step runs as host uid %s, want one of %s", pid, id[0], uids)
				}
				if tc.name != "bubblewrap" {
					continue
				}
				if id[1] == "0 0 4294967295" {
					continue // bwrap itself, in the host's user namespace (as the build uid)
				}
				f := strings.Fields(id[1])
				for i := 0; i+2 < len(f); i += 3 {
					outside, _ := strconv.Atoi(f[i+1])
					count, _ := strconv.Atoi(f[i+2])
					if outside <= 0 && outside+count > 0 || !uids.contains(outside) {
						t.Errorf("process %d: uid_map %q maps to host uid %d, want only one of %s", pid, id[1], outside, uids)
					}
				}
			}
			if !strings.Contains(out.String(), "wrote\n") || strings.Contains(out.String(), "wrote-git") {
				t.Errorf("want the workspace, $HOME and $TMPDIR writable and .git not:\n%s", out.String())
			}
			for _, f := range []string{filepath.Join(l.workspace, "built"), filepath.Join(l.scratch, "home", "h")} {
				if u := fileUID(t, f); u != step.HostUID || !uids.contains(u) {
					t.Errorf("%s is owned by host uid %d, want the step's %d of %s", f, u, step.HostUID, uids)
				}
			}
			if u := fileUID(t, git); u != 0 {
				t.Errorf(".git was given to uid %d; it must stay kiln's", u)
			}
			step.Done()
			if n := heldUIDs(); n != 0 {
				t.Errorf("%d build uids still held after the step", n)
			}
		})
	}
}

// TestConcurrentStepsGetTheirOwnUIDs: two steps running at once never share a uid; both go back.
func TestConcurrentStepsGetTheirOwnUIDs(t *testing.T) {
	asRoot(t)
	c := bwrapForTest(t, Bubblewrap{UIDs: UIDRange{First: 232000, Last: 232001}})
	l1, l2 := newLayout(t), newLayout(t)
	s1, err := c.Prepare(l1.jail(), "/bin/sh", "-c", "touch mine; sleep 0.3")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := c.Prepare(l2.jail(), "/bin/sh", "-c", "touch mine; sleep 0.3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prepare(newLayout(t).jail(), "/bin/true"); err == nil || !strings.Contains(err.Error(), "KILN_BUILD_UIDS") {
		t.Errorf("a third step with both uids held: err %v, want one naming KILN_BUILD_UIDS", err)
	}
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i, s := range []*Step{s1, s2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Done()
			out := new(strings.Builder)
			s.Cmd.Stdout = out
			if err := s.Start(s.Cmd.Start); err != nil {
				outs[i] = err.Error()
				return
			}
			if err := s.Cmd.Wait(); err != nil {
				outs[i] = err.Error()
				return
			}
			outs[i] = out.String()
		}()
	}
	wg.Wait()
	t.Log(outs)
	u1, u2 := fileUID(t, filepath.Join(l1.workspace, "mine")), fileUID(t, filepath.Join(l2.workspace, "mine"))
	if s1.HostUID == s2.HostUID || u1 == u2 || u1 != s1.HostUID || u2 != s2.HostUID {
		t.Errorf("two running steps: host uids %d and %d, their files owned by %d and %d (%q)", s1.HostUID, s2.HostUID, u1, u2, outs)
	}
	if n := heldUIDs(); n != 0 {
		t.Errorf("%d build uids still held after both steps", n)
	}
}

// TestProcKnobsAreReadOnly: the kernel's knobs under /proc cannot be written from a build.
func TestProcKnobsAreReadOnly(t *testing.T) {
	l := newLayout(t)
	c := bwrapForTest(t, Bubblewrap{})
	// Each write would leave the host as it is if it went through: the same core pattern, and 4
	// (only silence drop_caches's own log message).
	out := run(t, c, l.jail(), `
can() { if eval "$2" >/dev/null 2>&1; then echo "$1=yes"; else echo "$1=no"; fi; }
can core-pattern 'cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern'
can drop-caches 'echo 4 > /proc/sys/vm/drop_caches'
can read-hostname 'test "$(cat /proc/sys/kernel/hostname)" = kiln-build'
`)
	for _, want := range []string{"core-pattern=no", "drop-caches=no", "read-hostname=yes"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// TestBuildsCannotReachTheHostsLoopback: with the default network a build cannot connect to a
// listener on the host's 127.0.0.1; with NetworkHost it can (so the test can tell).
func TestBuildsCannotReachTheHostsLoopback(t *testing.T) {
	addr := tcptest.Serve(t, func(c net.Conn) {
		c.Write([]byte("kiln-api\n"))
		c.Close()
	})
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`if timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/%s && cat <&3' 2>/dev/null; then echo reached=yes; else echo reached=no; fi`, port)
	l := newLayout(t)
	for _, tc := range []struct {
		network Network
		reached bool
	}{{"", false}, {NetworkNone, false}, {NetworkHost, true}} {
		out := run(t, bwrapForTest(t, Bubblewrap{Network: tc.network}), l.jail(), script)
		if got := strings.Contains(out, "reached=yes"); got != tc.reached {
			t.Errorf("network %q: build reached the host's 127.0.0.1:%s = %v, want %v:\n%s", tc.network, port, got, tc.reached, out)
		}
	}
}

func TestUIDRange(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		want    UIDRange
	}{
		{in: "200000-200999", want: UIDRange{200000, 200999}},
		{in: " 300000 - 300000 ", want: UIDRange{300000, 300000}},
		{in: "300000", want: UIDRange{300000, 300000}},
		{in: "0-10", err: "uid 0"},
		{in: "-5", err: "not a uid range"},
		{in: "10-5", err: "empty"},
		{in: "60000-70000", err: "nobody"},
		{in: "abc", err: "not a uid range"},
		{in: "1-4294967295", err: "highest uid"},
	} {
		got, err := ParseUIDRange(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
	if err := (UIDRange{First: 1000, Last: 2000}).Check(1500); err == nil || !strings.Contains(err.Error(), "kiln's own uid") {
		t.Errorf("a range holding kiln's uid: %v", err)
	}
}

func TestParseNetwork(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Network
		err  string
	}{
		{"none", NetworkNone, ""}, {"off", NetworkNone, ""}, {"host", NetworkHost, ""}, {"on", NetworkHost, ""},
		{"public", "", "not offered"}, {"bridge", "", "not a sandbox network"},
	} {
		got, err := ParseNetwork(tc.in)
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) || tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("%q: %q %v", tc.in, got, err)
		}
	}
}
