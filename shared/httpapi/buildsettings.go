package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/outbound"
)

// buildSettingFields is the body of POST and PATCH of a build setting. In a PATCH, an absent
// field is unchanged and null clears one that may be empty.
type buildSettingFields struct {
	Platform              Optional[string] `json:"platform"`
	BuildType             Optional[string] `json:"buildType"`
	Branch                Optional[string] `json:"branch"`
	StreamPath            Optional[string] `json:"streamPath"`
	UEVersion             Optional[string] `json:"ueVersion"`
	UprojectPath          Optional[string] `json:"uprojectPath"`
	Trigger               Optional[string] `json:"trigger"`
	Schedule              Optional[string] `json:"schedule"`
	NotifyOnComplete      Optional[bool]   `json:"notifyOnComplete"`
	AutoDeploy            Optional[bool]   `json:"autoDeploy"`
	UploadBuildURL        Optional[string] `json:"uploadBuildUrl"`
	UploadBuildAuthHeader Optional[string] `json:"uploadBuildAuthHeader"`
	TimeoutMinutes        Optional[int]    `json:"timeoutMinutes"`
	AgentPool             Optional[string] `json:"agentPool"`
}

// apply merges the fields into s. Nulls of required fields are recorded as errors.
func (f buildSettingFields) apply(s *kiln.BuildSetting, sealer func(plain string) []byte, errs kiln.FieldErrors) {
	str := func(name string, o Optional[string], dst *string, nullable bool) {
		if !o.Set {
			return
		}
		if o.Null && !nullable {
			errs.Add(name, "must not be null")
		}
		*dst = strings.TrimSpace(o.Value)
	}
	var platform, buildType, trigger string
	platform, buildType, trigger = string(s.Platform), string(s.BuildType), string(s.Trigger)
	str("platform", f.Platform, &platform, false)
	str("buildType", f.BuildType, &buildType, false)
	str("trigger", f.Trigger, &trigger, false)
	s.Platform, s.BuildType, s.Trigger = kiln.Platform(platform), kiln.BuildType(buildType), kiln.Trigger(trigger)
	str("branch", f.Branch, &s.Branch, true)
	str("streamPath", f.StreamPath, &s.StreamPath, true)
	str("ueVersion", f.UEVersion, &s.UEVersion, false)
	str("uprojectPath", f.UprojectPath, &s.UprojectPath, true)
	str("schedule", f.Schedule, &s.Schedule, true)
	str("agentPool", f.AgentPool, &s.AgentPool, true)
	uploadURL := s.UploadBuildURL
	str("uploadBuildUrl", f.UploadBuildURL, &uploadURL, true)
	// A new origin drops the stored header unless this request gives one (set below).
	s.SetUploadBuildURL(uploadURL)
	if f.NotifyOnComplete.Set {
		if f.NotifyOnComplete.Null {
			errs.Add("notifyOnComplete", "must not be null")
		}
		s.NotifyOnComplete = f.NotifyOnComplete.Value
	}
	if f.TimeoutMinutes.Set {
		s.TimeoutMinutes = f.TimeoutMinutes.Value // null: the service's limit
		if !f.TimeoutMinutes.Null && f.TimeoutMinutes.Value == 0 {
			errs.Add("timeoutMinutes", "must be 1 or more, or null for the service's limit")
		}
	}
	if f.AutoDeploy.Set {
		if f.AutoDeploy.Null {
			errs.Add("autoDeploy", "must not be null")
		}
		s.AutoDeploy = f.AutoDeploy.Value
	}
	if h := f.UploadBuildAuthHeader; h.Set {
		switch {
		case h.Null || h.Value == "":
			s.UploadBuildAuthHeader = nil
		case len(h.Value) > 8192 || strings.ContainsAny(h.Value, "\r\n\x00"):
			errs.Add("uploadBuildAuthHeader", "must be one header value of at most 8 KiB, without line breaks")
		default:
			s.UploadBuildAuthHeader = sealer(h.Value)
		}
	}
}

// settingSealer seals an upload auth header for one build setting: the setting id is the
// associated data, so a sealed value copied to another setting does not open.
func (s *Server) settingSealer(settingID string) func(string) []byte {
	return func(plain string) []byte { return s.sealer.Seal([]byte(plain), []byte("build-setting:"+settingID)) }
}

// checkEngine answers engine_not_found for a version no build host provides.
func (s *Server) checkEngine(ctx context.Context, version string) error {
	ok, err := s.engines.Provides(ctx, version)
	if err != nil {
		return err
	}
	if !ok {
		return &kiln.Error{Code: kiln.EEngineNotFound, Message: "no build host provides Unreal Engine " + version + "; " + s.providedEngines(ctx),
			Fields: map[string]string{"ueVersion": "no build host provides this version"}}
	}
	return nil
}

// checkUploadURL answers validation_failed for an uploadBuildUrl kiln may not reach.
func (s *Server) checkUploadURL(ctx context.Context, rawURL string) error {
	if rawURL == "" || s.checkUpload == nil {
		return nil
	}
	var blocked *outbound.BlockedError
	if err := s.checkUpload(ctx, rawURL); errors.As(err, &blocked) {
		return &kiln.Error{Code: kiln.EValidation, Message: "the upload URL's address is not public",
			Fields: map[string]string{"uploadBuildUrl": "resolves to an address kiln may not reach (the operator may allow it with KILN_OUTBOUND_ALLOW)"}}
	}
	return nil
}

// engineLister is implemented by engine sources that can list their versions.
type engineLister interface {
	Versions(ctx context.Context) ([]string, error)
}

// providedEngines says which versions the service provides, for engine_not_found.
func (s *Server) providedEngines(ctx context.Context) string {
	l, ok := s.engines.(engineLister)
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

// listBuildSettings answers GET /projects/:id/build-settings.
func (s *Server) listBuildSettings(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pr, err := s.project(r, p)
	if err != nil {
		return err
	}
	settings, err := s.store.ListBuildSettings(r.Context(), p.Organization.ID, pr.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderList(settings, nil, renderBuildSetting))
	return nil
}

// buildSetting loads the {settingId} of the {id} project.
func (s *Server) buildSetting(r *http.Request, p *auth.Principal) (*kiln.Project, *kiln.BuildSetting, error) {
	pr, err := s.project(r, p)
	if err != nil {
		return nil, nil, err
	}
	id := r.PathValue("settingId")
	if !kiln.ValidID(id) {
		return nil, nil, kiln.NotFound("build setting")
	}
	st, err := s.store.GetBuildSetting(r.Context(), p.Organization.ID, pr.ID, id)
	return pr, st, err
}

// getBuildSetting answers GET /projects/:id/build-settings/:settingId.
func (s *Server) getBuildSetting(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	_, st, err := s.buildSetting(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderBuildSetting(st))
	return nil
}

// createBuildSetting answers POST /projects/:id/build-settings. Fields left out take the
// organization's defaultProjectSettings, and uprojectPath the project's.
func (s *Server) createBuildSetting(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pr, err := s.project(r, p)
	if err != nil {
		return err
	}
	var f buildSettingFields
	if err := decodeBody(w, r, &f, false); err != nil {
		return err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	d := p.Organization.DefaultProjectSettings
	st := &kiln.BuildSetting{
		ID: kiln.NewID(), OrganizationID: p.Organization.ID, ProjectID: pr.ID,
		Platform: d.Platform, BuildType: d.BuildType, UEVersion: d.UEVersion, Trigger: d.Trigger,
		UprojectPath: pr.UprojectPath, CreatedAt: now, UpdatedAt: now,
	}
	if d.NotifyOnComplete != nil {
		st.NotifyOnComplete = *d.NotifyOnComplete
	}
	errs := kiln.FieldErrors{}
	f.apply(st, s.settingSealer(st.ID), errs)
	if err := errs.Err(); err != nil {
		return err
	}
	if err := requireFields(st, pr.SourceControl); err != nil {
		return err
	}
	if err := st.Validate(pr.SourceControl); err != nil {
		return err
	}
	if err := st.CheckTimeLimit(s.buildTimeLimit); err != nil {
		return err
	}
	if st.AgentPool == "" { // an agent offers its own engines when it claims
		if err := s.checkEngine(r.Context(), st.UEVersion); err != nil {
			return err
		}
	}
	// A delivery address or header is part of auto deploy: a plan without it saves neither.
	if st.AutoDeploy || st.UploadBuildURL != "" || st.UploadBuildAuthHeader != nil {
		if err := s.checkAutoDeployPlan(r.Context(), pr.OrganizationID); err != nil {
			return err
		}
	}
	if err := s.checkUploadURL(r.Context(), st.UploadBuildURL); err != nil {
		return err
	}
	if err := s.store.CreateBuildSetting(r.Context(), st); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, renderBuildSetting(st))
	return nil
}

// requireFields names the required fields that are still empty, as "is required".
func requireFields(st *kiln.BuildSetting, source kiln.SourceControl) error {
	errs := kiln.FieldErrors{}
	for name, v := range map[string]string{"platform": string(st.Platform), "buildType": string(st.BuildType),
		"ueVersion": st.UEVersion, "trigger": string(st.Trigger)} {
		if v == "" {
			errs.Add(name, "is required")
		}
	}
	if source == kiln.SourceGitHub && st.Branch == "" {
		errs.Add("branch", "is required for GitHub projects")
	}
	if source == kiln.SourcePerforce && st.StreamPath == "" {
		errs.Add("streamPath", "is required for Perforce projects")
	}
	return errs.Err()
}

// patchBuildSetting answers PATCH /projects/:id/build-settings/:settingId: any subset, and the
// rules still hold after the merge.
func (s *Server) patchBuildSetting(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pr, st, err := s.buildSetting(r, p)
	if err != nil {
		return err
	}
	var f buildSettingFields
	if err := decodeBody(w, r, &f, false); err != nil {
		return err
	}
	updated := *st
	errs := kiln.FieldErrors{}
	f.apply(&updated, s.settingSealer(st.ID), errs)
	if err := errs.Err(); err != nil {
		return err
	}
	if err := requireFields(&updated, pr.SourceControl); err != nil {
		return err
	}
	if err := updated.Validate(pr.SourceControl); err != nil {
		return err
	}
	if f.TimeoutMinutes.Set {
		if err := updated.CheckTimeLimit(s.buildTimeLimit); err != nil {
			return err
		}
	}
	if (f.UEVersion.Set || f.AgentPool.Set) && updated.AgentPool == "" { // agents offer their own engines
		if err := s.checkEngine(r.Context(), updated.UEVersion); err != nil {
			return err
		}
	}
	// Auto deploy on a plan without it: one set up before a downgrade keeps working as it is, but
	// turning it on, pointing it elsewhere or saving a delivery address or header (for a later
	// POST /builds/:id/deploy) is refused; clearing them is allowed.
	setsDelivery := f.UploadBuildURL.Set && updated.UploadBuildURL != "" || f.UploadBuildAuthHeader.Set && updated.UploadBuildAuthHeader != nil
	if updated.AutoDeploy && (!st.AutoDeploy || f.UploadBuildURL.Set || f.UploadBuildAuthHeader.Set) || setsDelivery {
		if err := s.checkAutoDeployPlan(r.Context(), pr.OrganizationID); err != nil {
			return err
		}
	}
	if f.UploadBuildURL.Set {
		if err := s.checkUploadURL(r.Context(), updated.UploadBuildURL); err != nil {
			return err
		}
	}
	updated.UpdatedAt = s.now().UTC().Truncate(time.Millisecond)
	if err := s.store.UpdateBuildSetting(r.Context(), &updated); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderBuildSetting(&updated))
	return nil
}

// deleteBuildSetting answers DELETE /projects/:id/build-settings/:settingId; its builds stay.
func (s *Server) deleteBuildSetting(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pr, st, err := s.buildSetting(r, p)
	if err != nil {
		return err
	}
	if err := s.store.DeleteBuildSetting(r.Context(), p.Organization.ID, pr.ID, st.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
