//go:build unix

package proctree

import (
	"errors"
	"runtime"
	"sync"
	"syscall"
)

// sysTree holds, on Unix, only the thread a KillWithParent child was started from: the group's
// id is the child's pid.
type sysTree struct {
	release     chan struct{} // closed by Close: the starting thread may end or serve others
	releaseOnce sync.Once
}

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
		return t.startOnOwnThread()
	}
	return t.cmd.Start()
}

// startOnOwnThread starts the command from an OS thread locked to a goroutine until Close. Linux
// sends Pdeathsig when the thread that forked the child ends, not the process, and the Go runtime
// ends any thread whose goroutine exits while locked to it (as the sandbox's mount namespace
// setup does). Started from whatever thread the caller runs on, the child could be killed
// whenever that thread later served such a goroutine.
func (t *Tree) startOnOwnThread() error {
	t.sys.release = make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := t.cmd.Start()
		errc <- err
		if err == nil {
			<-t.sys.release
		}
		runtime.UnlockOSThread()
	}()
	return <-errc
}

func (t *Tree) stop() error { return t.signal(syscall.SIGTERM) }

func (t *Tree) kill() error { return t.signal(syscall.SIGKILL) }

func (t *Tree) signal(sig syscall.Signal) error {
	if t.cmd.Process == nil {
		return errors.New("proctree: not started")
	}
	return syscall.Kill(-t.cmd.Process.Pid, sig)
}

func (t *Tree) close() error {
	if t.sys.release != nil {
		t.sys.releaseOnce.Do(func() { close(t.sys.release) })
	}
	return nil
}
