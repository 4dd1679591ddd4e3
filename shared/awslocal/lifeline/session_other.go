//go:build !unix

package lifeline

import "syscall"

// ownSession is nothing where there are no sessions; kiln aws-local runs on Linux only, and
// Start fails without /bin/sh.
func ownSession() *syscall.SysProcAttr { return nil }
