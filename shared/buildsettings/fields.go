package buildsettings

import (
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Value is one field of a request: Set when it was given, Null when it was given as null.
type Value[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Fields are the fields of a create or update. In an update, a field not Set is unchanged and
// a Null one clears a field that may be empty.
type Fields struct {
	Platform              Value[string]
	BuildType             Value[string]
	Branch                Value[string]
	StreamPath            Value[string]
	UEVersion             Value[string]
	UprojectPath          Value[string]
	Trigger               Value[string]
	Schedule              Value[string]
	NotifyOnComplete      Value[bool]
	AutoDeploy            Value[bool]
	UploadBuildURL        Value[string]
	UploadBuildAuthHeader Value[string]
	TimeoutMinutes        Value[int]
	AgentPool             Value[string]
}

// maxAuthHeader is the longest uploadBuildAuthHeader kept.
const maxAuthHeader = 8192

// apply merges the fields into s. Nulls of required fields are recorded as errors; the upload
// auth header is sealed with seal.
func (f Fields) apply(s *kiln.BuildSetting, seal func(plain string) []byte, errs kiln.FieldErrors) {
	str := func(name string, o Value[string], dst *string, nullable bool) {
		if !o.Set {
			return
		}
		if o.Null && !nullable {
			errs.Add(name, "must not be null")
		}
		*dst = strings.TrimSpace(o.Value)
	}
	flag := func(name string, o Value[bool], dst *bool) {
		if !o.Set {
			return
		}
		if o.Null {
			errs.Add(name, "must not be null")
		}
		*dst = o.Value
	}
	platform, buildType, trigger := string(s.Platform), string(s.BuildType), string(s.Trigger)
	str("platform", f.Platform, &platform, false)
	str("buildType", f.BuildType, &buildType, false)
	str("trigger", f.Trigger, &trigger, false)
	s.Platform, s.BuildType, s.Trigger = kiln.Platform(platform), kiln.BuildType(buildType), kiln.Trigger(trigger)
	str("branch", f.Branch, &s.Branch, true)
	str("streamPath", f.StreamPath, &s.StreamPath, true)
	str("ueVersion", f.UEVersion, &s.UEVersion, true)
	str("uprojectPath", f.UprojectPath, &s.UprojectPath, true)
	str("schedule", f.Schedule, &s.Schedule, true)
	str("agentPool", f.AgentPool, &s.AgentPool, true)
	uploadURL := s.UploadBuildURL
	str("uploadBuildUrl", f.UploadBuildURL, &uploadURL, true)
	// A new origin drops the stored header unless this request gives one (set below).
	s.SetUploadBuildURL(uploadURL)
	flag("notifyOnComplete", f.NotifyOnComplete, &s.NotifyOnComplete)
	if f.TimeoutMinutes.Set {
		s.TimeoutMinutes = f.TimeoutMinutes.Value // null: the service's limit
		if !f.TimeoutMinutes.Null && f.TimeoutMinutes.Value == 0 {
			errs.Add("timeoutMinutes", "must be 1 or more, or null for the service's limit")
		}
	}
	flag("autoDeploy", f.AutoDeploy, &s.AutoDeploy)
	if h := f.UploadBuildAuthHeader; h.Set {
		switch {
		case h.Null || h.Value == "":
			s.UploadBuildAuthHeader = nil
		case len(h.Value) > maxAuthHeader || strings.ContainsAny(h.Value, "\r\n\x00"):
			errs.Add("uploadBuildAuthHeader", "must be one header value of at most 8 KiB, without line breaks")
		default:
			s.UploadBuildAuthHeader = seal(h.Value)
		}
	}
}

// requireFields names the required fields that are still empty, as "is required".
func requireFields(st *kiln.BuildSetting, source kiln.SourceControl) error {
	errs := kiln.FieldErrors{}
	for name, v := range map[string]string{"platform": string(st.Platform), "buildType": string(st.BuildType),
		"trigger": string(st.Trigger)} {
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
