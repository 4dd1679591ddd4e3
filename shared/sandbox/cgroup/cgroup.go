// Package cgroup puts a build step's process tree into a control group that kiln makes for it,
// with limits on its memory, its number of processes and its share of the CPU, so that one
// organization's build cannot starve the machine, kiln or the other builds.
//
// It uses cgroup v2 where the host's unified hierarchy carries the controllers (kiln running as a
// systemd service with Delegate=yes), and the v1 memory, pids and cpu hierarchies where those are
// what the host has. Every group it makes is below kiln's own group (as /proc/self/cgroup names
// it, per hierarchy), in a directory kiln-builds; it never touches a group it did not make.
package cgroup

import (
	"fmt"
	"regexp"
)

// Limits are the limits of one group. Zero leaves a limit unset.
type Limits struct {
	// MemoryBytes caps the memory of the group's processes (page cache included); past it the
	// kernel's OOM killer stops them.
	MemoryBytes int64
	// Pids caps how many processes and threads the group holds at once.
	Pids int64
	// CPUWeight is the group's share of the CPU against its siblings, as cgroup v2's cpu.weight
	// (1 to 10000, default 100); v1's cpu.shares gets weight*1024/100.
	CPUWeight int
}

// Validate checks the limits' ranges.
func (l Limits) Validate() error {
	if l.MemoryBytes < 0 || l.Pids < 0 {
		return fmt.Errorf("cgroup: negative limit (memory %d, pids %d)", l.MemoryBytes, l.Pids)
	}
	if l.CPUWeight != 0 && (l.CPUWeight < 1 || l.CPUWeight > 10000) {
		return fmt.Errorf("cgroup: CPU weight %d is not between 1 and 10000", l.CPUWeight)
	}
	return nil
}

// The limits a Manager may apply, named after their controllers.
const (
	Memory = "memory"
	Pids   = "pids"
	CPU    = "cpu"
)

var controllers = []string{Memory, Pids, CPU}

// groupName is what New accepts as a group's name: one path element, no dots first.
var groupName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)
