package sandbox

import (
	"os"
	"os/exec"
)

// Unconfined runs steps as plain child processes of kiln, with kiln's environment less its own
// settings and credentials (KILN_SANDBOX=off). It is for a service that builds for one trusted
// studio only: the step can read everything kiln can.
type Unconfined struct {
	// Allow, if set, is asked before each step; its error fails the build (kiln uses it to refuse
	// unconfined builds once the service holds several organizations).
	Allow func() error
}

// Command returns the command, unconfined.
func (u Unconfined) Command(j Jail, path string, args ...string) (*exec.Cmd, error) {
	if u.Allow != nil {
		if err := u.Allow(); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = j.Dir
	cmd.Env = append(hostEnv(os.Environ()), j.Env...)
	return cmd, nil
}

// Unavailable fails every step with Reason: the service was asked to confine builds and cannot.
type Unavailable struct{ Reason string }

// Command returns the reason as an error.
func (u Unavailable) Command(Jail, string, ...string) (*exec.Cmd, error) {
	return nil, &Error{Reason: u.Reason}
}

// Error is a sandbox that cannot run a step; Reason is written for the build's failureReason.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }
