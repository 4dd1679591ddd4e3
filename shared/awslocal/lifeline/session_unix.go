//go:build unix

package lifeline

import "syscall"

// ownSession starts the watchdog in a session of its own: no terminal's signals reach it.
func ownSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
