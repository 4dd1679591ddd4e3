// Package serve is kiln serve's composition root: it reads the operator's configuration and builds
// the one-machine service from it. `kiln serve` and `kiln admin` only call it; kiln aws-local
// (awslocalapp) reads the same configuration, and the Lambdas are composed in awsapp.
package serve

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/sandbox"
	"github.com/kilnbuild/kiln/shared/settings"
)

// Config is the operator interface of `kiln serve` (docs/api.md): environment variables, each
// overridable by a flag of the same name in lower case (--addr, --public_url or --public-url).
type Config struct {
	Addr                string
	Data                string
	PublicURL           string
	Engines             string
	Workers             int
	GitHubAPIURL        string
	GitHubAppID         string
	GitHubAppKey        string
	GitHubWebhookSecret string
	GitHubClientID      string
	// SignUp opens GitHub sign-in and self-service organizations (KILN_SIGNUP=github).
	SignUp             bool
	GitHubClientSecret string
	GitHubWebURL       string
	P4                 string
	OutboundAllow      []netip.Prefix
	DeliveryAttempts   int
	DeliveryBackoff    time.Duration
	// RateLimit is requests per second per token (burst: four times that); 0 turns it off.
	RateLimit float64
	// ArtifactRetention is how long artifacts are kept.
	ArtifactRetention time.Duration
	// SMTPURL is the mail server for build notifications (smtp://user:pass@host:port); empty
	// turns notifications off. SMTPFrom is their From address.
	SMTPURL, SMTPFrom string
	// Sandbox is how builds are confined: "bwrap" (bubblewrap) or "off".
	Sandbox string
	// SandboxOffConfirmed is KILN_SANDBOX_OFF_I_TRUST_EVERY_ORGANIZATION: builds may run
	// unconfined although the service holds several organizations.
	SandboxOffConfirmed bool
	// Bwrap is the bubblewrap binary; SandboxNetwork the network builds get (none or host);
	// SandboxReadOnly more host directories builds see read-only; SandboxEnv names of variables
	// passed to builds.
	Bwrap           string
	SandboxNetwork  sandbox.Network
	SandboxReadOnly []string
	SandboxEnv      []string
	// BuildUIDs are the host uids builds run as, one per running build, when kiln runs as root
	// (KILN_BUILD_UIDS).
	BuildUIDs sandbox.UIDRange
	// BuildTimeout is how long a build may run (KILN_BUILD_TIMEOUT).
	BuildTimeout time.Duration
	// BuildMemory (bytes), BuildPids and BuildCPUWeight limit each build's engine step
	// (KILN_BUILD_MEMORY, KILN_BUILD_PIDS, KILN_BUILD_CPU_WEIGHT); 0 is no limit.
	BuildMemory    int64
	BuildPids      int64
	BuildCPUWeight int
	// DiskReserve is the free space kept on the data volume (KILN_DISK_RESERVE).
	DiskReserve DiskReserve
	// OrgMaxRunning caps one organization's running builds; 0 means Workers.
	OrgMaxRunning int
	// AgentWait is how long a build for an agent pool waits for an agent (KILN_AGENT_WAIT).
	AgentWait time.Duration
	// Plans is the plans' limits: the defaults, or those of the KILN_PLANS file.
	Plans kiln.PlanTable
	// LogMaxLines caps a build's log; ArtifactMax its artifact's bytes.
	LogMaxLines int
	ArtifactMax int64
	// CacheMaxPerOrg caps the bytes of one organization's build caches (oldest removed first).
	CacheMaxPerOrg int64
	// Artifacts is where artifacts are kept: "file" (under Data) or s3://bucket[/prefix].
	Artifacts string
	// SchedulerEvery is how often schedules are checked (0: the scheduler's default; tests
	// shorten it). No setting reads it.
	SchedulerEvery time.Duration
	// SchedulerClock is the time the scheduler fires the due slots of (nil: time.Now); tests run
	// it ahead so that a slot comes at once. No setting reads it.
	SchedulerClock func() time.Time
	// publicURLFromAddr is true when PublicURL was not given and follows the listen address.
	publicURLFromAddr bool
}

// setting is one of kiln serve's rows of the settings registry (shared/settings: its name,
// default and meaning) with how LoadConfig applies its value.
type setting struct {
	env, def, usage string // the row's Name, Default and Help
	row             settings.Row
	apply           func(c *Config, v string) error
}

// fromRow is kiln serve's setting of row r, applied by apply.
func fromRow(r settings.Row, apply func(c *Config, v string) error) setting {
	return setting{r.Name, r.Default, r.Help, r, apply}
}

var serveSettings = []setting{
	fromRow(settings.Addr, func(c *Config, v string) error {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return errors.New("must be host:port")
		}
		c.Addr = v
		return nil
	}),
	fromRow(settings.Data, str(func(c *Config) *string { return &c.Data })),
	shared(settings.PublicURL, func(c *Config) *string { return &c.PublicURL }),
	fromRow(settings.Engines, str(func(c *Config) *string { return &c.Engines })),
	shared(settings.Workers, func(c *Config) *int { return &c.Workers }),
	fromRow(settings.OrgMaxRunning, func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		return positiveInt(func(c *Config) *int { return &c.OrgMaxRunning })(c, v)
	}),
	shared(settings.Plans, func(c *Config) *kiln.PlanTable { return &c.Plans }),
	shared(settings.AgentWait, func(c *Config) *time.Duration { return &c.AgentWait }),
	shared(settings.LogMaxLines, func(c *Config) *int { return &c.LogMaxLines }),
	shared(settings.ArtifactMax, func(c *Config) *int64 { return &c.ArtifactMax }),
	shared(settings.Artifacts, func(c *Config) *string { return &c.Artifacts }),
	shared(settings.CacheMaxPerOrg, func(c *Config) *int64 { return &c.CacheMaxPerOrg }),
	shared(settings.GitHubAPIURL, func(c *Config) *string { return &c.GitHubAPIURL }),
	checked(settings.GitHubAppID, func(c *Config) *string { return &c.GitHubAppID }),
	fromRow(settings.GitHubAppKey, str(func(c *Config) *string { return &c.GitHubAppKey })),
	fromRow(settings.GitHubWebhookSecret, str(func(c *Config) *string { return &c.GitHubWebhookSecret })),
	shared(settings.GitHubClientID, func(c *Config) *string { return &c.GitHubClientID }),
	fromRow(settings.GitHubClientSecret, str(func(c *Config) *string { return &c.GitHubClientSecret })),
	shared(settings.SignUp, func(c *Config) *bool { return &c.SignUp }),
	shared(settings.GitHubWebURL, func(c *Config) *string { return &c.GitHubWebURL }),
	fromRow(settings.P4, str(func(c *Config) *string { return &c.P4 })),
	shared(settings.OutboundAllow, func(c *Config) *[]netip.Prefix { return &c.OutboundAllow }),
	shared(settings.DeliveryAttempts, func(c *Config) *int { return &c.DeliveryAttempts }),
	shared(settings.DeliveryBackoff, func(c *Config) *time.Duration { return &c.DeliveryBackoff }),
	shared(settings.ArtifactRetention, func(c *Config) *time.Duration { return &c.ArtifactRetention }),
	shared(settings.SMTPURL, func(c *Config) *string { return &c.SMTPURL }),
	shared(settings.SMTPFrom, func(c *Config) *string { return &c.SMTPFrom }),
	fromRow(settings.Sandbox, func(c *Config, v string) error {
		if v != "bwrap" && v != "off" {
			return errors.New("must be bwrap or off")
		}
		c.Sandbox = v
		return nil
	}),
	fromRow(settings.SandboxOffConfirmed, boolean(func(c *Config) *bool { return &c.SandboxOffConfirmed })),
	fromRow(settings.Bwrap, str(func(c *Config) *string { return &c.Bwrap })),
	fromRow(settings.SandboxNetwork, func(c *Config, v string) error {
		n, err := sandbox.ParseNetwork(v)
		if err != nil {
			return err
		}
		c.SandboxNetwork = n
		return nil
	}),
	fromRow(settings.BuildUIDs, func(c *Config, v string) error {
		r, err := sandbox.ParseUIDRange(v)
		if err != nil {
			return err
		}
		c.BuildUIDs = r
		return nil
	}),
	fromRow(settings.SandboxReadOnly, func(c *Config, v string) error {
		c.SandboxReadOnly = nil
		for _, p := range commaList(v) {
			if !filepath.IsAbs(p) {
				return fmt.Errorf("%q is not an absolute path", p)
			}
			c.SandboxReadOnly = append(c.SandboxReadOnly, filepath.Clean(p))
		}
		return nil
	}),
	fromRow(settings.SandboxEnv, func(c *Config, v string) error {
		c.SandboxEnv = nil
		for _, name := range commaList(v) {
			if strings.HasPrefix(name, "KILN_") || strings.ContainsAny(name, "= ") {
				return fmt.Errorf("%q cannot be passed to builds", name)
			}
			c.SandboxEnv = append(c.SandboxEnv, name)
		}
		return nil
	}),
	shared(settings.BuildTimeout, func(c *Config) *time.Duration { return &c.BuildTimeout }),
	// The limits of one build (config_limits.go); after KILN_WORKERS, which their defaults divide by.
	fromRow(settings.BuildMemory, applyBuildMemory),
	fromRow(settings.BuildPids, applyBuildPids),
	fromRow(settings.BuildCPUWeight, applyBuildCPUWeight),
	fromRow(settings.DiskReserve, applyDiskReserve),
	shared(settings.RateLimit, func(c *Config) *float64 { return &c.RateLimit }),
}

// LoadConfig reads the configuration from the environment, then from flags in args. Every value
// is checked; the error names the setting at fault.
func LoadConfig(args []string, getenv func(string) string, usageOut io.Writer) (Config, error) {
	var c Config
	values := map[string]string{}
	fs := flag.NewFlagSet("kiln serve", flag.ContinueOnError)
	fs.SetOutput(usageOut)
	fs.Usage = func() { printSettings(usageOut) }
	for _, s := range serveSettings {
		values[s.env] = s.row.Get(getenv)
		name := flagName(s.env)
		set := func(v string) error { values[s.env] = v; return nil }
		fs.Func(name, s.usage+" ($"+s.env+")", set)
		if dashed := strings.ReplaceAll(name, "_", "-"); dashed != name {
			fs.Func(dashed, "same as --"+name, set)
		}
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, s := range serveSettings {
		if err := s.apply(&c, values[s.env]); err != nil {
			return c, fmt.Errorf("%s: %w", s.env, err)
		}
	}
	if c.PublicURL == "" {
		c.PublicURL, c.publicURLFromAddr = "http://"+c.Addr, true
	}
	if c.Data == "" {
		return c, errors.New("KILN_DATA: must not be empty")
	}
	if c.SignUp && (c.GitHubClientID == "" || c.GitHubClientSecret == "" || c.GitHubAppID == "") {
		return c, errors.New("KILN_SIGNUP: github needs the GitHub App and its OAuth client (KILN_GITHUB_APP_ID, KILN_GITHUB_APP_KEY, KILN_GITHUB_CLIENT_ID, KILN_GITHUB_CLIENT_SECRET)")
	}
	return c, nil
}

// shared is the row of a setting kiln serve shares with the AWS deployment: its name, default,
// meaning and parser are shared/settings'.
func shared[T any](s settings.Setting[T], field func(*Config) *T) setting {
	return fromRow(s.Row, func(c *Config, v string) error {
		t, err := s.Parse(v)
		if err != nil {
			return err
		}
		*field(c) = t
		return nil
	})
}

// checked is a shared setting kiln serve keeps as written, once its parser accepts it.
func checked[T any](s settings.Setting[T], field func(*Config) *string) setting {
	return fromRow(s.Row, func(c *Config, v string) error {
		if _, err := s.Parse(v); err != nil {
			return err
		}
		*field(c) = v
		return nil
	})
}

func str(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *field(c) = v; return nil }
}

func positiveInt(field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := settings.ParseCount(v)
		if err != nil {
			return err
		}
		*field(c) = n
		return nil
	}
}

func boolean(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be 1 or 0")
		}
		*field(c) = b
		return nil
	}
}

// commaList splits a comma-separated setting, dropping blanks.
func commaList(v string) []string {
	var out []string
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// AuthCacheTTL is how long a resolved API token is reused. Revocations and organization changes
// made through the same process apply at once; in AWS, other instances see them within this time.
const AuthCacheTTL = 5 * time.Second
