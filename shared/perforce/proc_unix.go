//go:build unix

package perforce

import (
	"os/exec"
	"syscall"
)

// inOwnGroup starts cmd as the leader of a new process group and, when its context ends, kills
// the whole group (p4 and anything it started), not just p4.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
