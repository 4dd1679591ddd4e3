package buildsteps

import (
	"crypto/rand"
	"encoding/hex"
	"os/exec"
)

// Limits gives each build's engine step a resource group of its own (memory, processes, CPU),
// made fresh for the build and removed after it.
type Limits interface {
	Group(name string) (LimitGroup, error)
}

// LimitGroup is the resource group of one build's engine step.
type LimitGroup interface {
	// Place makes cmd start inside the group; it is called before cmd starts.
	Place(cmd *exec.Cmd) error
	// Exceeded is why the step was stopped by one of the group's limits, written for the
	// build's failureReason, or "" when no limit stopped it.
	Exceeded() string
	// Close kills what is left in the group and removes it.
	Close() error
}

// limitGroup makes the build's resource group, or none without Limits.
func (a *Steps) limitGroup(name string) (LimitGroup, error) {
	if a.Limits == nil {
		return noLimits{}, nil
	}
	if name == "" {
		b := make([]byte, 8)
		rand.Read(b)
		name = "build-" + hex.EncodeToString(b)
	}
	return a.Limits.Group(name)
}

type noLimits struct{}

func (noLimits) Place(*exec.Cmd) error { return nil }
func (noLimits) Exceeded() string      { return "" }
func (noLimits) Close() error          { return nil }
