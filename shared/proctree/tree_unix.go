//go:build unix

package proctree

import (
	"errors"
	"syscall"
)

// sysTree is nothing on Unix: the group's id is the child's pid.
type sysTree struct{}

func (t *Tree) start() error {
	attr := t.cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
		t.cmd.SysProcAttr = attr
	}
	if t.opts.Session {
		attr.Setsid = true
	} else {
		attr.Setpgid = true
	}
	if t.opts.KillWithParent {
		killWithParent(attr)
	}
	return t.cmd.Start()
}

func (t *Tree) stop() error { return t.signal(syscall.SIGTERM) }

func (t *Tree) kill() error { return t.signal(syscall.SIGKILL) }

func (t *Tree) signal(sig syscall.Signal) error {
	if t.cmd.Process == nil {
		return errors.New("proctree: not started")
	}
	return syscall.Kill(-t.cmd.Process.Pid, sig)
}

func (t *Tree) close() error { return nil }
