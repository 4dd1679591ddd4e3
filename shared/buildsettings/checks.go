package buildsettings

import (
	"context"
	"errors"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/outbound"
)

// SealAD is the associated data an upload auth header of setting id is sealed with, so a sealed
// value copied to another setting does not open.
func SealAD(settingID string) []byte { return []byte("build-setting:" + settingID) }

// sealFor seals an upload auth header for one build setting.
func (s *Service) sealFor(settingID string) func(string) []byte {
	return func(plain string) []byte { return s.Sealer.Seal([]byte(plain), SealAD(settingID)) }
}

// checkEngine answers engine_not_found for a version no build host provides.
func (s *Service) checkEngine(ctx context.Context, version string) error {
	ok := false
	if s.Engines != nil {
		var err error
		if ok, err = s.Engines.Provides(ctx, version); err != nil {
			return err
		}
	}
	if !ok {
		return kiln.FieldError(kiln.EEngineNotFound, "no build host provides Unreal Engine "+version+"; "+s.providedEngines(ctx),
			"ueVersion", "no build host provides this version")
	}
	return nil
}

// providedEngines says which versions the service provides, for engine_not_found.
func (s *Service) providedEngines(ctx context.Context) string {
	l, ok := s.Engines.(EngineLister)
	if !ok {
		return "ask the operator which versions are installed"
	}
	versions, err := l.Versions(ctx)
	switch {
	case err != nil:
		return "ask the operator which versions are installed"
	case len(versions) == 0:
		return "this service provides no engine version yet"
	default:
		return "this service provides " + strings.Join(versions, ", ")
	}
}

// checkUploadURL answers validation_failed for an uploadBuildUrl kiln may not reach.
func (s *Service) checkUploadURL(ctx context.Context, rawURL string) error {
	if rawURL == "" || s.CheckUploadURL == nil {
		return nil
	}
	var blocked *outbound.BlockedError
	if err := s.CheckUploadURL(ctx, rawURL); errors.As(err, &blocked) {
		return kiln.FieldError(kiln.EValidation, "the upload URL's address is not public",
			"uploadBuildUrl", "resolves to an address kiln may not reach (the operator may allow it with KILN_OUTBOUND_ALLOW)")
	}
	return nil
}

// checkAutoDeployPlan is nil when the organization's plan, as stored now, includes auto deploy
// (a delivery address, its header), plan_limit_reached when it does not.
func (s *Service) checkAutoDeployPlan(ctx context.Context, orgID string) error {
	if s.Plans == nil {
		return nil
	}
	org, err := s.Store.GetOrganization(ctx, orgID)
	if err != nil {
		return err
	}
	return s.Plans.CheckAutoDeploy(org)
}
