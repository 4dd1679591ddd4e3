//go:build unix && !linux

package proctree

import "syscall"

// killWithParent does nothing: only Linux has Pdeathsig.
func killWithParent(*syscall.SysProcAttr) {}
