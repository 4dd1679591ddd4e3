package store

import "github.com/kilnbuild/kiln/shared/kiln"

// ProjectLimitReached is what CreateProject returns when the organization already has max
// projects. Its code is plan_limit_reached; the caller, which knows the plan, words the message.
func ProjectLimitReached(max int) *kiln.Error {
	return kiln.Errorf(kiln.EPlanLimitReached, "the organization has %d project(s), as many as allowed", max)
}
