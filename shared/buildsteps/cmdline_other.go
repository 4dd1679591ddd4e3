//go:build !windows

package buildsteps

import "os/exec"

// setCmdLine does nothing: only Windows passes a process one command line instead of arguments.
func setCmdLine(*exec.Cmd, string) {}
