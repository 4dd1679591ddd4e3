//go:build unix

package codebuild

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// apply makes cmd run as a uid of its own, in a work directory of its own under the system's
// temporary directory (the stand-in's directory, under KILN_DATA, is root's alone) that the uid
// owns; release removes that directory and gives the uid back once cmd has ended. Without a
// run-as, or when the stand-in is not root (it cannot switch users), cmd runs as the stand-in's
// user in its work directory.
func (r *RunAs) apply(cmd *exec.Cmd) (release func(), err error) {
	if r == nil || r.User == "" || os.Geteuid() != 0 {
		return func() {}, nil
	}
	if r.Take == nil {
		return nil, errors.New("codebuild: run-as " + r.User + ": no uid to run it as")
	}
	uid, giveBack, err := r.Take()
	if err != nil {
		return nil, fmt.Errorf("codebuild: run-as %s: %w", r.User, err)
	}
	work, err := os.MkdirTemp("", "kiln-codebuild-")
	if err == nil {
		if err = os.Chown(work, uid, uid); err != nil {
			os.RemoveAll(work)
		}
	}
	if err != nil {
		giveBack()
		return nil, fmt.Errorf("codebuild: run-as %s: a work directory for uid %d: %w", r.User, uid, err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}
	cmd.Dir = work
	cmd.Env = append(cmd.Env, "CODEBUILD_SRC_DIR="+work, "HOME="+work, "USER="+r.User, "LOGNAME="+r.User)
	return func() {
		os.RemoveAll(work)
		giveBack()
	}, nil
}
