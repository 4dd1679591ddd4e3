package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/buildsettings"
	"github.com/kilnbuild/kiln/shared/kiln"
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

// fields are the request's fields as the build settings service takes them.
func (f buildSettingFields) fields() buildsettings.Fields {
	return buildsettings.Fields{
		Platform: value(f.Platform), BuildType: value(f.BuildType), Branch: value(f.Branch), StreamPath: value(f.StreamPath),
		UEVersion: value(f.UEVersion), UprojectPath: value(f.UprojectPath), Trigger: value(f.Trigger), Schedule: value(f.Schedule),
		NotifyOnComplete: value(f.NotifyOnComplete), AutoDeploy: value(f.AutoDeploy), UploadBuildURL: value(f.UploadBuildURL),
		UploadBuildAuthHeader: value(f.UploadBuildAuthHeader), TimeoutMinutes: value(f.TimeoutMinutes), AgentPool: value(f.AgentPool),
	}
}

func value[T any](o Optional[T]) buildsettings.Value[T] {
	return buildsettings.Value[T]{Set: o.Set, Null: o.Null, Value: o.Value}
}

// settingReader is what the build setting handlers read themselves; changes go through the
// build settings service.
type settingReader interface {
	GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error)
	ListBuildSettings(ctx context.Context, orgID, projectID string) ([]*kiln.BuildSetting, error)
}

// listBuildSettings answers GET /projects/:id/build-settings.
func (s *Server) listBuildSettings(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pr, err := s.project(r, p)
	if err != nil {
		return err
	}
	settings, err := s.settingsReader.ListBuildSettings(r.Context(), p.Organization.ID, pr.ID)
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
	st, err := s.settingsReader.GetBuildSetting(r.Context(), p.Organization.ID, pr.ID, id)
	return pr, st, err
}

// namedSetting loads the setting of the {id} project that {settingId} names: its id, or a
// readable name, Platform/BuildType (with @branch or @stream where two settings share it; see
// kiln.ResolveSetting). A name several settings share is validation_failed, listing them.
func (s *Server) namedSetting(r *http.Request, p *auth.Principal) (*kiln.Project, *kiln.BuildSetting, error) {
	ref := r.PathValue("settingId")
	if kiln.ValidID(ref) || !strings.Contains(ref, "/") {
		return s.buildSetting(r, p)
	}
	pr, err := s.project(r, p)
	if err != nil {
		return nil, nil, err
	}
	settings, err := s.settingsReader.ListBuildSettings(r.Context(), p.Organization.ID, pr.ID)
	if err != nil {
		return nil, nil, err
	}
	st, err := kiln.ResolveSetting(settings, ref)
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
	st, err := s.settings.Create(r.Context(), p.Organization, pr, f.fields())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, renderBuildSetting(st))
	return nil
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
	updated, err := s.settings.Update(r.Context(), pr, st, f.fields())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderBuildSetting(updated))
	return nil
}

// deleteBuildSetting answers DELETE /projects/:id/build-settings/:settingId; its builds stay.
func (s *Server) deleteBuildSetting(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	_, st, err := s.buildSetting(r, p)
	if err != nil {
		return err
	}
	if err := s.settings.Delete(r.Context(), st); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
