//go:build unix

package ec2hosts

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// apply makes the instance's agent run as a uid of its own, its work directory (and home) a new
// directory under the system's temporary directory (the stand-in's directory, under KILN_DATA,
// is root's alone) that the uid owns; release removes it and gives the uid back once the agent
// has ended; uid is the uid the agent runs as. Without a run-as, or when the stand-in is not root
// (it cannot switch users), the agent runs as the stand-in's user.
func (r *RunAs) apply(cmd *exec.Cmd) (release func(), uid int, err error) {
	if r == nil || os.Geteuid() != 0 {
		return func() {}, os.Geteuid(), nil
	}
	if r.Take == nil {
		return nil, 0, errors.New("ec2hosts: run as " + r.User + ": no uid to run it as")
	}
	uid, giveBack, err := r.Take()
	if err != nil {
		return nil, 0, fmt.Errorf("ec2hosts: run as %s: %w", r.User, err)
	}
	home, err := os.MkdirTemp("", "kiln-ec2-")
	if err == nil {
		if err = os.Chown(home, uid, uid); err != nil {
			os.RemoveAll(home)
		}
	}
	if err != nil {
		giveBack()
		return nil, 0, fmt.Errorf("ec2hosts: run as %s: a home for uid %d: %w", r.User, uid, err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}
	cmd.Dir = home
	cmd.Env = append(cmd.Env, "HOME="+home, "USER="+r.User, "LOGNAME="+r.User, "KILN_AGENT_WORKDIR="+filepath.Join(home, "work"))
	return func() {
		os.RemoveAll(home)
		giveBack()
	}, uid, nil
}
