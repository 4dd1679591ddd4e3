package sandbox

import (
	"os"
	"os/exec"
)

// Unconfined runs steps as plain child processes of kiln, with kiln's environment less its own
// settings and credentials (KILN_SANDBOX=off). It is for a service that builds for one trusted
// studio only: the step can read everything kiln's user can. When kiln runs as root the step
// still runs as a build uid of UIDs of its own (never root: Unreal refuses to run as root),
// owning the jail's writable directories, with $HOME and $TMPDIR there.
type Unconfined struct {
	// Allow, if set, is asked before each step; its error fails the build (kiln uses it to refuse
	// unconfined builds once the service holds several organizations).
	Allow func() error
	// UIDs are the host uids steps run as when kiln runs as root; the zero value is DefaultUIDs.
	UIDs UIDRange
}

// Prepare returns the command, unconfined.
func (u Unconfined) Prepare(j Jail, path string, args ...string) (*Step, error) {
	if u.Allow != nil {
		if err := u.Allow(); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = j.Dir
	cmd.Env = hostEnv(os.Environ())
	if os.Geteuid() == 0 && j.Home != "" && j.Tmp != "" {
		// root's $HOME and $TMPDIR are not the build uid's to write.
		cmd.Env = append(cmd.Env, "HOME="+j.Home, "TMPDIR="+j.Tmp, "USER="+buildUser, "LOGNAME="+buildUser)
	}
	cmd.Env = append(cmd.Env, j.Env...)
	s := &Step{Cmd: cmd}
	if err := asBuildUser(s, u.UIDs, j, jailDirs(j, []string{j.Dir, path})); err != nil {
		s.Done()
		return nil, err
	}
	return s, nil
}

// Unavailable fails every step with Reason: the service was asked to confine builds and cannot.
type Unavailable struct{ Reason string }

// Prepare returns the reason as an error.
func (u Unavailable) Prepare(Jail, string, ...string) (*Step, error) {
	return nil, &Error{Reason: u.Reason}
}

// Error is a sandbox that cannot run a step; Reason is written for the build's failureReason.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }
