package cgroup

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain doubles as the helper a test runs inside a group: with KILN_CGROUP_TEST_ALLOC_MIB
// set, it allocates and touches that many MiB, then exits.
func TestMain(m *testing.M) {
	if v := os.Getenv("KILN_CGROUP_TEST_ALLOC_MIB"); v != "" {
		n, _ := strconv.Atoi(v)
		var keep [][]byte
		for range n {
			b := make([]byte, 1<<20)
			for i := range len(b) / 4096 {
				b[i*4096] = 1
			}
			keep = append(keep, b)
		}
		fmt.Printf("allocated %d MiB\n", len(keep))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hostManager opens the host's cgroups, skipping the test where a limit it needs cannot be
// applied here (with why).
func hostManager(t *testing.T, need ...string) *Manager {
	t.Helper()
	m := Open(nil)
	for _, c := range need {
		if !m.Applies(c) {
			t.Skipf("this host cannot apply the %s limit: %v", c, m.Unavailable())
		}
	}
	return m
}

func uniqueName(t *testing.T) string {
	b := make([]byte, 4)
	rand.Read(b)
	return "test-" + hex.EncodeToString(b)
}

func newGroup(t *testing.T, m *Manager, l Limits) *Group {
	t.Helper()
	g, err := m.New(uniqueName(t), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func TestMemoryLimitStopsAProcessOverIt(t *testing.T) {
	m := hostManager(t, Memory)
	for _, tc := range []struct {
		name     string
		allocMiB int
		wantKill bool
	}{
		{"under the limit", 16, false},
		{"over the limit", 256, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup(t, m, Limits{MemoryBytes: 64 << 20})
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "KILN_CGROUP_TEST_ALLOC_MIB="+strconv.Itoa(tc.allocMiB))
			if err := g.Place(cmd); err != nil {
				t.Fatal(err)
			}
			out, err := cmd.CombinedOutput()
			if killed := err != nil; killed != tc.wantKill {
				t.Fatalf("allocating %d MiB under a 64 MiB limit: err %v, output %q", tc.allocMiB, err, out)
			}
			if got := g.MemoryExceeded(); got != tc.wantKill {
				t.Fatalf("MemoryExceeded %v after allocating %d MiB under a 64 MiB limit", got, tc.allocMiB)
			}
		})
	}
}

func TestPidsLimitStopsAForkBomb(t *testing.T) {
	m := hostManager(t, Pids)
	for _, tc := range []struct {
		name     string
		pids     int64
		wantStop bool
	}{
		{"room for them", 100, false},
		{"fifty sleeps over a limit of 20", 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup(t, m, Limits{Pids: tc.pids})
			cmd := exec.Command("/bin/sh", "-c", `for i in $(seq 50); do sleep 2 & done; wait`)
			if err := g.Place(cmd); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			peak := 0
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
		wait:
			for {
				select {
				case err = <-done:
					break wait
				case <-time.After(50 * time.Millisecond):
					peak = max(peak, groupProcs(t, g, Pids))
				}
			}
			if peak > int(tc.pids) {
				t.Errorf("%d processes in a group limited to %d", peak, tc.pids)
			}
			if stopped := err != nil; stopped != tc.wantStop || g.PidsExceeded() != tc.wantStop {
				t.Fatalf("50 sleeps, limit %d: err %v, PidsExceeded %v, peak %d, output %q", tc.pids, err, g.PidsExceeded(), peak, out.String())
			}
			if !tc.wantStop && peak < 40 {
				t.Errorf("peak of %d processes: the sleeps did not all run in the group", peak)
			}
		})
	}
}

// groupProcs counts the processes in the group's directory of controller c.
func groupProcs(t *testing.T, g *Group, c string) int {
	for _, d := range g.dirs {
		if hasLimit(d, c) {
			return len(d.pids())
		}
	}
	t.Fatalf("no %s directory", c)
	return 0
}

// ownGroup is this process's group of controller c (v1), from /proc/self/cgroup.
func ownGroup(t *testing.T, c string) string {
	own, err := readOwnGroups("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	return own[c]
}

func TestAnUnprivilegedSessionLeaderStartsInsideItsGroupBelowKilns(t *testing.T) {
	m := hostManager(t, Memory, Pids)
	name := uniqueName(t)
	g, err := m.New(name, Limits{MemoryBytes: 256 << 20, Pids: 64, CPUWeight: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cmd := exec.Command("/bin/cat", "/proc/self/cgroup")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: 200123, Gid: 200123}}
	if err := g.Place(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, c := range []string{Memory, Pids} {
		want := filepath.Join(ownGroup(t, c), BuildsDir, dirName(name))
		if !strings.Contains(string(out), ":"+c+":"+want+"\n") {
			t.Errorf("%s group: want %s in\n%s", c, want, out)
		}
	}
	if m.Applies(CPU) && !strings.Contains(string(out), filepath.Join(BuildsDir, dirName(name))) {
		t.Errorf("no cpu group in\n%s", out)
	}
}

func TestCloseKillsLeftoversAndRemovesTheGroup(t *testing.T) {
	m := hostManager(t, Memory, Pids)
	g, err := m.New(uniqueName(t), Limits{MemoryBytes: 256 << 20, Pids: 64})
	if err != nil {
		t.Fatal(err)
	}
	dirs := g.Dirs()
	// The shell exits at once; its sleep stays behind, in the group.
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
	if err := g.Place(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	sleeper, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	if syscall.Kill(sleeper, 0) != nil {
		t.Fatalf("the sleep %d is not running", sleeper)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s is left: %v", d, err)
		}
	}
	// Reaped by init or gone: either way not running any more.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", sleeper)); err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
	}
	t.Errorf("the leftover sleep %d still runs", sleeper)
}

func TestNewRefusesBadNamesAndLimits(t *testing.T) {
	m := &Manager{}
	for _, tc := range []struct {
		name string
		l    Limits
	}{
		{"../escape", Limits{}},
		{"", Limits{}},
		{"a/b", Limits{}},
		{"ok", Limits{MemoryBytes: -1}},
		{"ok", Limits{CPUWeight: 10001}},
	} {
		if _, err := m.New(tc.name, tc.l); err == nil {
			t.Errorf("New(%q, %+v) accepted", tc.name, tc.l)
		}
	}
}
