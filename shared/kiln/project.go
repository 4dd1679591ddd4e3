package kiln

import (
	"regexp"
	"strings"
	"time"
)

// Project links one codebase (a GitHub repository or a Perforce stream) holding a .uproject to its
// build settings.
type Project struct {
	ID             string
	OrganizationID string
	Name           string
	Description    string
	SourceControl  SourceControl
	// RepoLink is owner/repository for GitHub projects, the stream path for Perforce ones.
	RepoLink       string
	InstallationID string
	DefaultBranch  string
	Depot          string
	// StreamPath is the Perforce path builds sync: a stream, or for a classic depot project the
	// root of DepotPath (//depot/Game for //depot/Game/...), which names it everywhere a stream
	// would (settings, builds, submit triggers).
	StreamPath string
	// DepotPath is set for a project on a classic depot path instead of a stream
	// (//depot/Game/...): its workspaces map the path with a client view.
	DepotPath       string
	UprojectPath    string
	Uproject        *UprojectInfo
	LastBuildAt     *time.Time
	LastBuildStatus BuildStatus
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// UprojectInfo is what kiln read from a project's .uproject file.
type UprojectInfo struct {
	Path          string
	ProjectName   string
	EngineVersion string
	Modules       []UprojectModule
	Plugins       []UprojectPlugin
}

// UprojectModule is one entry of a .uproject's Modules.
type UprojectModule struct {
	Name, Type, LoadingPhase string
}

// UprojectPlugin is one entry of a .uproject's Plugins.
type UprojectPlugin struct {
	Name    string
	Enabled bool
}

// MaxDescriptionLength bounds a project's description (in characters).
const MaxDescriptionLength = 2000

var (
	repoFullNameRe = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	depotPathRe    = regexp.MustCompile(`^//[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?$`)
	ueVersionRe    = regexp.MustCompile(`^[0-9]{1,3}(?:\.[0-9]{1,3}){0,2}$`)
)

// ValidRepoFullName reports whether s is a GitHub owner/repository name.
func ValidRepoFullName(s string) bool { return repoFullNameRe.MatchString(s) && s[len(s)-1] != '.' }

// DepotPathRoot is the root of a classic depot path: //depot/Game for //depot/Game/...; ok is
// false for anything else than //<depot>/<dir>[/<dir>]/... .
func DepotPathRoot(p string) (root string, ok bool) {
	root, ok = strings.CutSuffix(p, "/...")
	return root, ok && ValidDepotPath(root)
}

// ValidDepotPath reports whether s is //<depot>/<stream> or //<depot>/<stream>/<line>, with no
// Perforce wildcard ("...") and no part made only of dots.
func ValidDepotPath(s string) bool {
	if !depotPathRe.MatchString(s) || strings.Contains(s, "...") {
		return false
	}
	for _, part := range strings.Split(s[2:], "/") {
		if strings.Trim(part, ".") == "" {
			return false
		}
	}
	return true
}

// ValidUEVersion reports whether s is a dotted engine version: 5, 5.3 or 5.3.2.
func ValidUEVersion(s string) bool { return ueVersionRe.MatchString(s) }

// Validate checks the project's editable fields and the link fixed at creation.
func (p *Project) Validate() error {
	errs := FieldErrors{}
	ValidateName("name", p.Name, errs)
	if len([]rune(p.Description)) > MaxDescriptionLength {
		errs.Add("description", "must be at most 2000 characters")
	}
	switch p.SourceControl {
	case SourceGitHub:
		if !ValidRepoFullName(p.RepoLink) {
			errs.Add("repoFullName", "must be owner/repository")
		}
		if p.InstallationID == "" {
			errs.Add("installationId", "is required")
		}
	case SourcePerforce:
		if !ValidDepotPath(p.StreamPath) {
			errs.Add("streamPath", "must be a depot path //<depot>/<stream> or //<depot>/<stream>/<line>")
		}
	default:
		errs.Add("sourceControl", "must be github or perforce")
	}
	return errs.Err()
}
