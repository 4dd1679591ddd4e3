package sandbox

import (
	"os/exec"
	"sync"
)

// Step is one run of a program prepared by a Confiner: its command, and what the sandbox does
// around it. Start it with Start (never Cmd.Start alone) and call Done once the command was
// waited for and its process tree killed.
type Step struct {
	// Cmd has its Path, Args, Dir and Env set, and, when kiln runs as root, SysProcAttr.Credential
	// (the build's own uid, no supplementary groups). The caller may add to SysProcAttr (a
	// session, a process group) but must keep the Credential.
	Cmd *exec.Cmd
	// HostUID is the host uid the step runs as: a build uid of KILN_BUILD_UIDS when kiln runs as
	// root, else kiln's own.
	HostUID int

	// around wrap the start, outermost first: each gets the rest of the chain as next and must
	// call it at most once (a private mount namespace, later a cgroup).
	around []func(next func() error) error
	// done run in reverse order of adding, once, from Done.
	done []func()
	once sync.Once
}

// Start starts the command through start, the caller's own way of starting it (proctree's Start,
// or Cmd.Start), inside what the sandbox prepared for it.
func (s *Step) Start(start func() error) error {
	run := start
	for i := len(s.around) - 1; i >= 0; i-- {
		wrap, next := s.around[i], run
		run = func() error { return wrap(next) }
	}
	return run()
}

// Done gives back what the step held (its build uid). Call it after the command was waited for
// and its process tree killed, also when Start failed; later calls do nothing.
func (s *Step) Done() {
	s.once.Do(func() {
		for i := len(s.done) - 1; i >= 0; i-- {
			s.done[i]()
		}
		closeAll(s.Cmd.ExtraFiles)
	})
}

// onDone adds f to what Done does.
func (s *Step) onDone(f func()) { s.done = append(s.done, f) }

// wrapStart adds an outer wrapper around the start.
func (s *Step) wrapStart(f func(next func() error) error) { s.around = append(s.around, f) }
