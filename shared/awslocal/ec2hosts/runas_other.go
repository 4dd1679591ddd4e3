//go:build !unix

package ec2hosts

import (
	"errors"
	"os"
	"os/exec"
)

// apply refuses a run-as: switching users is done on unix only.
func (r *RunAs) apply(*exec.Cmd) (release func(), uid int, err error) {
	if r == nil {
		return func() {}, os.Geteuid(), nil
	}
	return nil, 0, errors.New("ec2hosts: run as " + r.User + ": agents run as another user on unix only")
}
