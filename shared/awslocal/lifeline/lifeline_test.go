//go:build linux

package lifeline

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/proctree"
	"github.com/kilnbuild/kiln/shared/proctree/proctest"
)

// The test binary re-executed as a parent: it starts a lifeline and children of every kind
// kiln aws-local has, prints their process groups, the marker, and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv("LIFELINE_TEST_PARENT") == "1" {
		os.Exit(parent())
	}
	os.Exit(m.Run())
}

func parent() int {
	l, err := Start()
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	var groups []string
	for _, script := range []string{
		"exec sleep 300",                       // a server (DynamoDB Local, MinIO, node)
		"setsid sleep 300 & exec sleep 300",    // a host whose build runs in a session of its own
		"env -i sleep 300 & exec sleep 300",    // a child that dropped its environment, in the group
		"sleep 300 & sleep 300 & exec sleep 1", // a leader that exits early, its group stays
	} {
		cmd := exec.Command("sh", "-c", script)
		l.Mark(cmd)
		tree := proctree.New(cmd, proctree.Options{})
		if err := tree.Start(); err != nil {
			fmt.Println("error", err)
			return 1
		}
		if err := l.Hold(cmd.Process.Pid); err != nil {
			fmt.Println("error", err)
			return 1
		}
		groups = append(groups, strconv.Itoa(cmd.Process.Pid))
	}
	fmt.Println("groups", strings.Join(groups, " "))
	fmt.Println("marker", l.Marker())
	time.Sleep(time.Hour)
	return 0
}

// TestSIGKILLedParentLeavesNothing: the parent dies by SIGKILL, and within seconds no process it
// started remains: not its children, not what they started in their groups or in sessions of
// their own.
func TestSIGKILLedParentLeavesNothing(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LIFELINE_TEST_PARENT=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var groups []int
	var marker string
	sc := bufio.NewScanner(out)
	for marker == "" && sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) > 1 && f[0] == "groups":
			for _, g := range f[1:] {
				n, _ := strconv.Atoi(g)
				groups = append(groups, n)
			}
		case len(f) == 2 && f[0] == "marker":
			marker = f[1]
		default:
			t.Fatalf("parent: %s", sc.Text())
		}
	}
	time.Sleep(300 * time.Millisecond) // the children started theirs
	started := guarded(t, marker, groups)
	if len(started) < 8 {
		t.Fatalf("found %d processes of the parent, want at least 8: %v", len(started), started)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []int
		for _, pid := range started {
			if proctest.Alive(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the parent's SIGKILL, %d of its %d processes remain: %v", len(left), len(started), describe(left))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCloseEndsWhatIsLeftButNotReleasedGroups: Close ends the groups still held and the marked
// processes; a group released (it ended, its id may be reused) is left alone.
func TestCloseEndsWhatIsLeftButNotReleasedGroups(t *testing.T) {
	l, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	held := exec.Command("sh", "-c", "env -i sleep 300 & exec sleep 300")
	l.Mark(held)
	heldTree := proctree.New(held, proctree.Options{})
	released := exec.Command("sleep", "300") // not marked: only its group could end it
	releasedTree := proctree.New(released, proctree.Options{})
	for _, tr := range []*proctree.Tree{heldTree, releasedTree} {
		if err := tr.Start(); err != nil {
			t.Fatal(err)
		}
		defer tr.Kill()
	}
	go held.Wait()
	go released.Wait()
	if err := l.Hold(held.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := l.Hold(released.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(released.Process.Pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	group := guarded(t, "", []int{held.Process.Pid})
	if len(group) != 2 {
		t.Fatalf("held group: %v, want the shell's sleep and its child", group)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	for _, pid := range group {
		if proctest.Alive(pid) {
			t.Errorf("process %d of a held group outlived Close: %s", pid, describe([]int{pid}))
		}
	}
	if !proctest.Alive(released.Process.Pid) {
		t.Error("Close killed a released group")
	}
	if err := l.Hold(5); err == nil {
		t.Error("Hold after Close: no error")
	}
}

// guarded lists the processes with the marker in their environment or in one of groups.
func guarded(t *testing.T, marker string, groups []int) []int {
	t.Helper()
	inGroup := map[int]bool{}
	for _, g := range groups {
		inGroup[g] = true
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		env, _ := os.ReadFile(d + "/environ")
		marked := marker != "" && bytes.Contains(append(append([]byte{0}, env...), 0), []byte("\x00"+marker+"\x00"))
		if marked || inGroup[proctest.Pgid(pid)] {
			pids = append(pids, pid)
		}
	}
	return pids
}

func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		fmt.Fprintf(&b, "%d %q %v; ", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), proctest.Stat(pid))
	}
	return b.String()
}
