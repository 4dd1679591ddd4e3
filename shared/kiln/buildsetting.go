package kiln

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// BuildSetting is a reusable preset of what gets built for a project.
type BuildSetting struct {
	ID               string
	OrganizationID   string
	ProjectID        string
	Platform         Platform
	BuildType        BuildType
	Branch           string
	StreamPath       string
	UEVersion        string
	UprojectPath     string
	Trigger          Trigger
	Schedule         string
	NotifyOnComplete bool
	AutoDeploy       bool
	UploadBuildURL   string
	// UploadBuildAuthHeader is the sealed (encrypted) Authorization value for uploadBuildUrl; it is
	// never returned by the API.
	UploadBuildAuthHeader []byte
	// TimeoutMinutes lowers the service's build time limit for this setting's builds; 0 keeps
	// the service's.
	TimeoutMinutes int
	// AgentPool names the pool of the organization's agents that runs this setting's builds
	// (`kiln agent --pool`); "" for the service's own hosts.
	AgentPool string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SetUploadBuildURL points auto deploy at u. The stored auth header was written for the old
// URL's origin (scheme, host and port): when the origin changes, or the URL is removed, the header
// is dropped, so a secret never reaches a server that the person who wrote it did not choose. A
// caller that is also given a new header sets it afterwards.
func (s *BuildSetting) SetUploadBuildURL(u string) {
	if u != s.UploadBuildURL && !SameOrigin(s.UploadBuildURL, u) {
		s.UploadBuildAuthHeader = nil
	}
	s.UploadBuildURL = u
}

// SameOrigin reports whether two absolute http(s) URLs have the same origin: scheme and host
// compared case-insensitively, and the port with the scheme's default filled in. An empty or
// unparsable URL has no origin and matches nothing.
func SameOrigin(a, b string) bool {
	oa, okA := origin(a)
	ob, okB := origin(b)
	return okA && okB && oa == ob
}

// origin is "scheme://host:port" of an absolute http(s) URL, normalized.
func origin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch {
	case port != "":
	case scheme == "https":
		port = "443"
	case scheme == "http":
		port = "80"
	default:
		return "", false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return scheme + "://" + net.JoinHostPort(host, port), true
}

// MaxBranchLength bounds branch names (git refuses longer refs on most hosts).
const MaxBranchLength = 255

// Validate checks the setting against the rules of docs/api.md for a project of the given kind.
// Whether the engine version is provided by a build host is checked by the caller.
func (s *BuildSetting) Validate(source SourceControl) error {
	errs := FieldErrors{}
	if !s.Platform.Valid() {
		errs.Add("platform", "must be one of "+strings.Join(enumNames(Platforms), ", "))
	}
	if !s.BuildType.Valid() {
		errs.Add("buildType", "must be one of "+strings.Join(enumNames(BuildTypes), ", "))
	}
	if s.UEVersion != "" && !ValidUEVersion(s.UEVersion) {
		errs.Add("ueVersion", "must be a dotted engine version such as 5.3 or 5.3.2, or absent for the .uproject's EngineAssociation")
	}
	if s.AgentPool != "" {
		ValidatePool("agentPool", s.AgentPool, errs)
	}
	if !s.Trigger.Valid() {
		errs.Add("trigger", "must be one of "+strings.Join(enumNames(Triggers), ", "))
	}
	switch source {
	case SourceGitHub:
		if !ValidBranch(s.Branch) {
			errs.Add("branch", "is required for GitHub projects and must be a valid branch name")
		}
		if s.StreamPath != "" {
			errs.Add("streamPath", "applies to Perforce projects only")
		}
	case SourcePerforce:
		if !ValidDepotPath(s.StreamPath) {
			errs.Add("streamPath", "is required for Perforce projects: //<depot>/<stream> or //<depot>/<stream>/<line>")
		}
		if s.Branch != "" {
			errs.Add("branch", "applies to GitHub projects only")
		}
	}
	if s.Trigger == TriggerScheduled {
		if _, err := ParseSchedule(s.Schedule); err != nil {
			errs.Add("schedule", "must be a 5-field cron expression in UTC, e.g. \"0 3 * * *\"")
		}
	} else if s.Schedule != "" {
		errs.Add("schedule", "applies only when trigger is scheduled")
	}
	if s.UprojectPath != "" && !ValidUprojectPath(s.UprojectPath) {
		errs.Add("uprojectPath", "must be a relative path ending in .uproject")
	}
	if s.UploadBuildURL != "" {
		if u, err := url.Parse(s.UploadBuildURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			errs.Add("uploadBuildUrl", "must be an absolute http or https URL without credentials")
		}
	}
	if s.AutoDeploy && s.UploadBuildURL == "" {
		errs.Add("uploadBuildUrl", "is required when autoDeploy is true")
	}
	return errs.Err()
}

// Ref is what the setting builds: its stream (Perforce) or its branch (GitHub); Validate lets a
// setting have only the one its project's source control uses.
func (s *BuildSetting) Ref() string {
	if s.StreamPath != "" {
		return s.StreamPath
	}
	return s.Branch
}

// CheckTimeLimit checks timeoutMinutes against the longest a build may run on this service
// (0: the service sets no limit of its own, and a day is the most a setting may ask).
func (s *BuildSetting) CheckTimeLimit(serviceLimit time.Duration) error {
	most := 24 * 60
	if serviceLimit > 0 {
		most = int(serviceLimit / time.Minute)
	}
	if s.TimeoutMinutes != 0 && (s.TimeoutMinutes < 1 || s.TimeoutMinutes > most) {
		errs := FieldErrors{}
		errs.Add("timeoutMinutes", fmt.Sprintf("must be a whole number of minutes from 1 to %d (this service's build time limit)", most))
		return errs.Err()
	}
	return nil
}

// TimeLimit is how long a build of this setting may run on a service whose own limit is
// serviceLimit (0: none).
func (s *BuildSetting) TimeLimit(serviceLimit time.Duration) time.Duration {
	own := time.Duration(s.TimeoutMinutes) * time.Minute
	switch {
	case own <= 0:
		return serviceLimit
	case serviceLimit <= 0 || own < serviceLimit:
		return own
	}
	return serviceLimit
}

// ParseSchedule parses a standard 5-field cron expression.
func ParseSchedule(expr string) (cron.Schedule, error) {
	if len(strings.Fields(expr)) != 5 {
		return nil, Errorf(EValidation, "a schedule has 5 fields")
	}
	return cron.ParseStandard(expr)
}

// ValidBranch reports whether s is usable as a git branch name.
func ValidBranch(s string) bool {
	if s == "" || len(s) > MaxBranchLength || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "/") ||
		strings.HasSuffix(s, "/") || strings.HasSuffix(s, ".lock") || strings.HasSuffix(s, ".") ||
		strings.Contains(s, "..") || strings.Contains(s, "//") || strings.Contains(s, "@{") {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("~^:?*[\\", r) {
			return false
		}
	}
	return true
}

// ValidUprojectPath reports whether s is a clean relative path to a .uproject file.
func ValidUprojectPath(s string) bool {
	if !strings.HasSuffix(s, ".uproject") || strings.HasPrefix(s, "/") || strings.Contains(s, "\\") || len(s) > 1024 {
		return false
	}
	for _, part := range strings.Split(s, "/") {
		if part == "" || part == "." || part == ".." || strings.HasPrefix(part, "-") {
			return false
		}
	}
	return true
}
