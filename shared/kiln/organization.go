package kiln

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Organization owns everything else: members, projects, build settings, builds.
type Organization struct {
	ID   string
	Name string
	Slug string
	Plan Plan
	// MaxConcurrentBuilds is an enterprise organization's own limit of builds running at once
	// (0: the enterprise plan's, by default the service's capacity). Only operators set it.
	MaxConcurrentBuilds    int
	DefaultProjectSettings ProjectDefaults
	Integrations           Integrations
	// Perforce holds the organization's Perforce credentials, or nil before they are saved.
	Perforce  *PerforceCredentials
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ProjectDefaults are the values a new build setting of the organization takes for the fields its
// creator leaves out. Empty fields are unset.
type ProjectDefaults struct {
	Platform         Platform
	BuildType        BuildType
	UEVersion        string
	Trigger          Trigger
	NotifyOnComplete *bool
}

// Validate checks the defaults that are set; prefix names the field in errors.
func (d ProjectDefaults) Validate(prefix string, errs FieldErrors) {
	if d.Platform != "" && !d.Platform.Valid() {
		errs.Add(prefix+".platform", "must be one of "+strings.Join(enumNames(Platforms), ", "))
	}
	if d.BuildType != "" && !d.BuildType.Valid() {
		errs.Add(prefix+".buildType", "must be one of "+strings.Join(enumNames(BuildTypes), ", "))
	}
	if d.UEVersion != "" && !ValidUEVersion(d.UEVersion) {
		errs.Add(prefix+".ueVersion", "must be a dotted engine version such as 5.3 or 5.3.2")
	}
	if d.Trigger != "" && !d.Trigger.Valid() {
		errs.Add(prefix+".trigger", "must be one of "+strings.Join(enumNames(Triggers), ", "))
	}
}

// Integrations holds the organization's links to source control.
type Integrations struct {
	// GitHubInstallationID is the linked GitHub App installation, or empty.
	GitHubInstallationID string
}

// PerforceCredentials are an organization's Perforce server and login. The ticket is sealed and
// never returned.
type PerforceCredentials struct {
	ServerURL string
	UserName  string
	// Ticket is the sealed Perforce ticket (or password). With Password, the ticket kiln's own
	// login got, renewed by kiln.
	Ticket []byte
	// Password is the sealed password when the credentials are a password (nil for a ticket):
	// kiln logs in with it (p4 login -a -p) and keeps the ticket in Ticket.
	Password []byte
	// TicketExpiresAt is when the ticket kiln logged in for expires (zero: a ticket given by the
	// customer, whose expiry kiln does not track).
	TicketExpiresAt time.Time
	// Fingerprint is the ssl server's fingerprint trusted on first contact; a changed one is
	// refused later.
	Fingerprint string
	UpdatedAt   time.Time
}

// MaxNameLength bounds organization, project and user names (in characters).
const MaxNameLength = 100

// ValidateName checks a display name: not blank, no control characters, at most MaxNameLength.
func ValidateName(field, name string, errs FieldErrors) {
	switch {
	case strings.TrimSpace(name) == "":
		errs.Add(field, "must not be empty")
	case utf8.RuneCountInString(name) > MaxNameLength:
		errs.Add(field, "must be at most 100 characters")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		errs.Add(field, "must not contain control characters")
	}
}

// Validate checks the organization's editable fields.
func (o *Organization) Validate() error {
	errs := FieldErrors{}
	ValidateName("name", o.Name, errs)
	if !o.Plan.Valid() {
		errs.Add("plan", "must be one of free, pro, enterprise")
	}
	o.DefaultProjectSettings.Validate("defaultProjectSettings", errs)
	return errs.Err()
}

// Slugify makes a URL-friendly slug from a name: lower-case letters and digits joined by single
// dashes. A name with nothing usable gives "org".
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 {
		return "org"
	}
	return b.String()
}
