package builds

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// RerunRequest asks for a new build like an earlier one.
type RerunRequest struct {
	OrganizationID string
	BuildID        string // the build to re-run
	TriggeredBy    string
	// ClientKey is the caller's Idempotency-Key, as for Trigger.
	ClientKey ClientKey
}

// Rerun triggers a new build of the same build setting, branch (stream) and commit (GitHub) or
// changelist (Perforce) as an earlier build of the organization, and as clean as it was, linked
// to it by RerunOf. A build whose commit was never resolved (it failed before checkout) is
// re-run at the head of its branch, as it asked. The setting is built as it is now (its engine,
// pool and delivery). It goes the way of Trigger: the plan's check, superseding, idempotency.
// A build of another organization is not_found; a build whose project or setting was deleted is
// invalid_state.
func (s *Service) Rerun(ctx context.Context, req RerunRequest) (b *kiln.Build, created bool, err error) {
	orig, err := s.Store.GetBuild(ctx, req.OrganizationID, req.BuildID)
	if err != nil {
		return nil, false, err
	}
	pr, err := s.Store.GetProject(ctx, orig.OrganizationID, orig.ProjectID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, false, kiln.Errorf(kiln.EInvalidState, "build %s cannot be re-run: its project was deleted", orig.ID)
	}
	if err != nil {
		return nil, false, err
	}
	st, err := s.Store.GetBuildSetting(ctx, orig.OrganizationID, orig.ProjectID, orig.BuildSettingID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, false, kiln.Errorf(kiln.EInvalidState, "build %s cannot be re-run: its build setting was deleted", orig.ID)
	}
	if err != nil {
		return nil, false, err
	}
	treq := TriggerRequest{Project: pr, Setting: st, Branch: orig.Branch, Clean: orig.Clean,
		TriggeredBy: req.TriggeredBy, ClientKey: req.ClientKey, RerunOf: orig.ID}
	if pr.SourceControl == kiln.SourcePerforce {
		treq.Changelist = orig.Changelist
		if treq.Changelist == "" {
			treq.Changelist = orig.Commit // a Perforce build's commit is its changelist
		}
	} else {
		treq.Commit = orig.Commit
	}
	return s.Trigger(ctx, treq)
}
