// Package proctree runs a child process as the root of a tree of processes that is stopped as a
// whole: everything the child starts (an engine's compilers and shader workers, git's helpers,
// p4's children) goes with it when a build is cancelled or times out.
//
// On Unix the tree is a process group (or a session) of its own, signalled as a group. On
// Windows it is a job object: the child is created suspended, put into the job and only then
// resumed, so nothing it starts escapes; the job kills every process in it when it is terminated
// and when its last handle closes, which also happens when kiln itself dies.
package proctree

import (
	"os/exec"
)

// Options says how the tree is made.
type Options struct {
	// Session starts the child in a session of its own (setsid) instead of only a process group
	// of its own: it then has no controlling terminal, so it cannot push keystrokes into the
	// terminal of whoever started kiln. Unix only; Windows children have no terminal to share.
	Session bool
	// KillWithParent kills the child when kiln ends (Linux's Pdeathsig): for helpers of tests,
	// which must not outlive a crashed test binary, and git's helpers. The child is started from
	// an OS thread kept for it until Close, since Pdeathsig follows the thread that forked it.
	// Elsewhere it does nothing (on Windows the job dies with kiln anyway).
	KillWithParent bool
}

// Tree is a child process and everything it starts. Make it with New, then call Start instead
// of the command's own Start; Close it once the command was waited for.
type Tree struct {
	cmd  *exec.Cmd
	opts Options
	sys  sysTree
}

// New prepares cmd to start as the root of a tree of its own. A command made by
// exec.CommandContext gets its Cancel replaced: when the context ends, the whole tree is killed,
// not just the child.
func New(cmd *exec.Cmd, o Options) *Tree {
	t := &Tree{cmd: cmd, opts: o}
	if cmd.Cancel != nil {
		cmd.Cancel = t.Kill
	}
	return t
}

// Start starts the command in its tree.
func (t *Tree) Start() error { return t.start() }

// Stop asks every process of the tree to end: SIGTERM to the group on Unix. Windows has no such
// request that reaches a tree of processes without a console of their own, so there Stop kills
// the tree at once, as Kill does.
func (t *Tree) Stop() error { return t.stop() }

// Kill kills every process of the tree at once (SIGKILL to the group; TerminateJobObject). It may
// be called after the child exited, to end what it left behind.
func (t *Tree) Kill() error { return t.kill() }

// Close releases the tree. On Windows it closes the job object, which kills whatever still runs
// in it; on Unix it leaves the group as it is (call Kill first to end it). It may be called more
// than once.
func (t *Tree) Close() error { return t.close() }

// Run runs cmd in a tree of its own and waits for it, like cmd.Run: when the context of a command
// made by exec.CommandContext ends, the whole tree is killed.
func Run(cmd *exec.Cmd, o Options) error {
	t := New(cmd, o)
	if err := t.Start(); err != nil {
		return err
	}
	defer t.Close()
	return cmd.Wait()
}
