//go:build !linux && !windows

package proctree

import (
	"os"
	"syscall"
)

// running reports whether pid is a process that signal 0 reaches (a zombie counts as running).
func running(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}
