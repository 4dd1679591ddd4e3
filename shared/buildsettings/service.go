// Package buildsettings saves a project's build settings under kiln's rules: the organization's
// defaults, required fields, the engine a build host must provide, the upload URL kiln may
// reach, the sealed upload auth header and the plan's auto deploy gate. The API decodes a
// request into Fields, calls the Service and renders what it answers.
package buildsettings

import (
	"context"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Store is what the service reads and writes.
type Store interface {
	// GetOrganization reads the organization as stored now, for the plan gate (a caller's copy
	// may be cached, and a plan may just have changed).
	GetOrganization(ctx context.Context, id string) (*kiln.Organization, error)
	CreateBuildSetting(ctx context.Context, s *kiln.BuildSetting) error
	UpdateBuildSetting(ctx context.Context, s *kiln.BuildSetting) error
	DeleteBuildSetting(ctx context.Context, orgID, projectID, id string) error
}

// Engines tells which Unreal Engine versions the service's build hosts provide.
type Engines interface {
	Provides(ctx context.Context, version string) (bool, error)
}

// EngineLister is implemented by engine sources that can list their versions (named in
// engine_not_found).
type EngineLister interface {
	Versions(ctx context.Context) ([]string, error)
}

// Sealer seals a secret with associated data (keyring.Sealer).
type Sealer interface {
	Seal(plaintext, associated []byte) []byte
}

// Plans tells whether an organization's plan includes auto deploy (plans.Plans): nil, or
// plan_limit_reached.
type Plans interface {
	CheckAutoDeploy(org *kiln.Organization) error
}

// Service creates, updates and deletes build settings.
type Service struct {
	Store Store
	// Engines is checked for a setting's ueVersion unless the setting builds on an agent pool
	// (an agent offers its own engines when it claims). Nil provides none.
	Engines Engines
	// Sealer seals uploadBuildAuthHeader; the setting's id is the associated data.
	Sealer Sealer
	// Plans gates auto deploy and delivery addresses (nil: every plan allows them).
	Plans Plans
	// CheckUploadURL refuses an uploadBuildUrl kiln may not reach (an *outbound.BlockedError);
	// nil checks nothing (deliveries are checked anyway).
	CheckUploadURL func(ctx context.Context, rawURL string) error
	// TimeLimit is the longest a build may run on this service (0: none of its own); a setting's
	// timeoutMinutes may only lower it.
	TimeLimit time.Duration
	// Caches, with Settings, removes the build caches of a key no setting of the project builds
	// any more, once a setting is deleted or moves to another branch, platform or engine
	// version (nil: none kept).
	Caches   Caches
	Settings SettingLister
	Logger   *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Create saves a new setting of project pr in org. Fields left out take the organization's
// defaultProjectSettings, and uprojectPath the project's; except ueVersion, which stays absent
// (a build then takes the .uproject's EngineAssociation before the organization's default, see
// builds.ResolveEngine).
func (s *Service) Create(ctx context.Context, org *kiln.Organization, pr *kiln.Project, f Fields) (*kiln.BuildSetting, error) {
	now := kiln.Now(s.Now)
	d := org.DefaultProjectSettings
	st := &kiln.BuildSetting{
		ID: kiln.NewID(), OrganizationID: org.ID, ProjectID: pr.ID,
		Platform: d.Platform, BuildType: d.BuildType, Trigger: d.Trigger,
		UprojectPath: pr.UprojectPath, CreatedAt: now, UpdatedAt: now,
	}
	if d.NotifyOnComplete != nil {
		st.NotifyOnComplete = *d.NotifyOnComplete
	}
	if pr.DepotPath != "" {
		st.StreamPath = pr.StreamPath // a classic depot project's path root, unless the fields say otherwise
	}
	if err := s.merge(st, f, pr.SourceControl); err != nil {
		return nil, err
	}
	if err := st.CheckTimeLimit(s.TimeLimit); err != nil {
		return nil, err
	}
	if st.AgentPool == "" && st.UEVersion != "" {
		if err := s.checkEngine(ctx, st.UEVersion); err != nil {
			return nil, err
		}
	}
	// A delivery address or header is part of auto deploy: a plan without it saves neither.
	if st.AutoDeploy || st.UploadBuildURL != "" || st.UploadBuildAuthHeader != nil {
		if err := s.checkAutoDeployPlan(ctx, pr.OrganizationID); err != nil {
			return nil, err
		}
	}
	if err := s.checkUploadURL(ctx, st.UploadBuildURL); err != nil {
		return nil, err
	}
	if err := s.Store.CreateBuildSetting(ctx, st); err != nil {
		return nil, err
	}
	return st, nil
}

// Update merges f (any subset) into st, a setting of project pr, and saves the result if the
// rules still hold after the merge. st itself is left as it was.
func (s *Service) Update(ctx context.Context, pr *kiln.Project, st *kiln.BuildSetting, f Fields) (*kiln.BuildSetting, error) {
	updated := *st
	if err := s.merge(&updated, f, pr.SourceControl); err != nil {
		return nil, err
	}
	if f.TimeoutMinutes.Set {
		if err := updated.CheckTimeLimit(s.TimeLimit); err != nil {
			return nil, err
		}
	}
	if (f.UEVersion.Set || f.AgentPool.Set) && updated.AgentPool == "" && updated.UEVersion != "" {
		if err := s.checkEngine(ctx, updated.UEVersion); err != nil {
			return nil, err
		}
	}
	// Auto deploy on a plan without it: one set up before a downgrade keeps working as it is, but
	// turning it on, pointing it elsewhere or saving a delivery address or header (for a later
	// POST /builds/:id/deploy) is refused; clearing them is allowed.
	setsDelivery := f.UploadBuildURL.Set && updated.UploadBuildURL != "" || f.UploadBuildAuthHeader.Set && updated.UploadBuildAuthHeader != nil
	if updated.AutoDeploy && (!st.AutoDeploy || f.UploadBuildURL.Set || f.UploadBuildAuthHeader.Set) || setsDelivery {
		if err := s.checkAutoDeployPlan(ctx, pr.OrganizationID); err != nil {
			return nil, err
		}
	}
	if f.UploadBuildURL.Set {
		if err := s.checkUploadURL(ctx, updated.UploadBuildURL); err != nil {
			return nil, err
		}
	}
	updated.UpdatedAt = kiln.Now(s.Now)
	if err := s.Store.UpdateBuildSetting(ctx, &updated); err != nil {
		return nil, err
	}
	if cacheKey(&updated) != cacheKey(st) {
		s.dropUnusedCache(ctx, st)
	}
	return &updated, nil
}

// Delete removes a setting; its builds stay.
func (s *Service) Delete(ctx context.Context, st *kiln.BuildSetting) error {
	if err := s.Store.DeleteBuildSetting(ctx, st.OrganizationID, st.ProjectID, st.ID); err != nil {
		return err
	}
	s.dropUnusedCache(ctx, st)
	return nil
}

// merge applies f to st and checks the fields' own rules: nulls of required fields, required
// fields still empty, then the setting's validation for the project's source control.
func (s *Service) merge(st *kiln.BuildSetting, f Fields, source kiln.SourceControl) error {
	errs := kiln.FieldErrors{}
	f.apply(st, s.sealFor(st.ID), errs)
	if err := errs.Err(); err != nil {
		return err
	}
	if err := requireFields(st, source); err != nil {
		return err
	}
	if st.Trigger == kiln.TriggerScheduled && st.Schedule == "" {
		st.Schedule = kiln.DefaultSchedule
	}
	return st.Validate(source)
}
