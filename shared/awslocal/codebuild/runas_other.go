//go:build !unix

package codebuild

import (
	"errors"
	"os/exec"
)

// apply refuses a run-as: switching users is done on unix only.
func (r *RunAs) apply(*exec.Cmd) (release func(), err error) {
	if r == nil || r.User == "" {
		return func() {}, nil
	}
	return nil, errors.New("codebuild: run-as " + r.User + ": builds run as another user on unix only")
}
