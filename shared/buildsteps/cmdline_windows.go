package buildsteps

import (
	"os/exec"
	"syscall"
)

// setCmdLine makes line the whole command line cmd's process gets.
func setCmdLine(cmd *exec.Cmd, line string) {
	if line == "" {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CmdLine = line
}
