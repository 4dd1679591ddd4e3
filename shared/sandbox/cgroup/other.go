//go:build !linux

package cgroup

import (
	"errors"
	"log/slog"
	"os/exec"
)

// Manager applies no limit: control groups are Linux's.
type Manager struct{}

// Group is nothing outside Linux.
type Group struct{}

// Open returns a Manager that says no limit can be applied.
func Open(*slog.Logger) *Manager { return &Manager{} }

// Unavailable says why: control groups are Linux's.
func (m *Manager) Unavailable() []string {
	var out []string
	for _, c := range controllers {
		out = append(out, c+": control groups need Linux")
	}
	return out
}

func (m *Manager) Available() []string   { return nil }
func (m *Manager) Applies(c string) bool { return false }
func (m *Manager) New(string, Limits) (*Group, error) {
	return nil, errors.New("cgroup: control groups need Linux")
}
func (g *Group) Place(*exec.Cmd) error { return nil }
func (g *Group) MemoryExceeded() bool  { return false }
func (g *Group) PidsExceeded() bool    { return false }
func (g *Group) Close() error          { return nil }
func (g *Group) Dirs() []string        { return nil }

// MachineMemory is unknown outside Linux: 0.
func MachineMemory() int64 { return 0 }
