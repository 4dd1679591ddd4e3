// Package sandbox confines the build steps that run a customer's code. RunUAT compiles and runs
// the project's build rules and pre-build steps, so on a machine shared by several organizations
// it must not see kiln's data directory, its keys, its processes or its environment, nor write
// anything but its own build's directories.
//
// Bubblewrap (bwrap, from Debian's bubblewrap package) gives each build its own user, mount, PID,
// IPC, UTS and network namespaces; Unconfined runs the step as a plain child process, for a single trusted
// studio; Unavailable fails every build with a reason that names the fix. When kiln runs as
// root, both Bubblewrap and Unconfined run each step as an unprivileged host uid of its own
// (UIDRange): no build ever runs as root.
package sandbox

import (
	"slices"
	"strings"
)

// Jail says what a confined step may see and where it runs.
type Jail struct {
	// ReadOnly are directories visible read-only at their own paths (the engine installation).
	ReadOnly []string
	// Writable are directories visible read-write at their own paths (the build's workspace and
	// its staging directory).
	Writable []string
	// Protected are paths inside Writable that stay read-only (the checkout's .git, whose hooks
	// and config the next checkout, run by kiln outside the sandbox, would obey).
	Protected []string
	// Dir is the working directory; it must be inside ReadOnly or Writable.
	Dir string
	// Home is the step's $HOME and Tmp its $TMPDIR; both must be inside Writable.
	Home, Tmp string
	// Env are more NAME=value variables the step gets.
	Env []string
}

// Confiner prepares the step that runs a program confined to a jail. The caller starts the
// step's command with Step.Start (in a process group of its own: it may add Setsid or Setpgid to
// the command's SysProcAttr, keeping its Credential), waits for it, and then calls Step.Done.
type Confiner interface {
	Prepare(j Jail, path string, args ...string) (*Step, error)
}

var (
	_ Confiner = (*Bubblewrap)(nil)
	_ Confiner = Unconfined{}
	_ Confiner = Unavailable{}
)

// hostEnv is the environment an unconfined step gets: this process's, without kiln's own settings
// and the credentials a host may hold.
func hostEnv(environ []string) []string {
	drop := []string{"P4PASSWD", "P4TICKETS", "GITHUB_TOKEN", "GH_TOKEN"}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "KILN_") || strings.HasPrefix(name, "AWS_") ||
			strings.HasPrefix(name, "GIT_CONFIG_") || slices.Contains(drop, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
