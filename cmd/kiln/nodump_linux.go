package main

import "golang.org/x/sys/unix"

// hideProcess makes this process non-dumpable: its /proc/<pid>/environ, mem, fd and the like then
// belong to root, and another process of the same non-root user cannot read them or attach to it
// (root still can). An unconfined build runs as the agent's user; it could otherwise read the
// agent's environment and memory, and with them the token that claims the pool's builds.
// Children are not affected: exec makes them dumpable again.
func hideProcess() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
