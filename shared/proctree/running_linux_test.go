package proctree

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// running reports whether pid is a live process (a zombie is not).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// statField returns field n (1-based, as proc(5) numbers them) of /proc/pid/stat.
func statField(t *testing.T, pid, n int) string {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return fields[n-3]
}

func TestGroupAndSession(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       Options
		ownSession bool
	}{
		{"group", Options{}, false},
		{"session", Options{Session: true}, true},
		{"kill with parent", Options{KillWithParent: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sleep", "300")
			tree := New(cmd, tc.opts)
			if err := tree.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tree.Kill(); _ = cmd.Wait(); tree.Close() }()
			pid := strconv.Itoa(cmd.Process.Pid)
			if pgrp := statField(t, cmd.Process.Pid, 5); pgrp != pid {
				t.Errorf("process group %s, want its own (%s)", pgrp, pid)
			}
			if sid := statField(t, cmd.Process.Pid, 6); (sid == pid) != tc.ownSession {
				t.Errorf("session %s of process %s: own session %v, want %v", sid, pid, sid == pid, tc.ownSession)
			}
			if got := cmd.SysProcAttr.Pdeathsig != 0; got != tc.opts.KillWithParent {
				t.Errorf("Pdeathsig set %v, want %v", got, tc.opts.KillWithParent)
			}
		})
	}
}
