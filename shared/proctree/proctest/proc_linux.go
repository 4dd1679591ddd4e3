// Package proctest reads /proc for tests that check which processes are left: a process's stat
// fields, whether it is alive, its process group.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Stat is /proc/pid/stat's fields after the command's name: state, ppid, pgrp, ... (nil when
// the process is gone).
func Stat(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}

// Alive reports whether the process exists and is not a zombie (a killed orphan may wait for
// init to reap it).
func Alive(pid int) bool {
	f := Stat(pid)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// Pgid is the process's group, 0 when it is gone.
func Pgid(pid int) int {
	f := Stat(pid)
	if len(f) < 3 {
		return 0
	}
	n, _ := strconv.Atoi(f[2])
	return n
}
