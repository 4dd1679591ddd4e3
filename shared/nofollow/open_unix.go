//go:build unix

package nofollow

import "syscall"

// openNoBlock keeps an open of a pipe from waiting for a writer (regular files ignore it).
const openNoBlock = syscall.O_NONBLOCK
