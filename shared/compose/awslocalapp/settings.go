package awslocalapp

import (
	"net/netip"
	"time"

	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
	"github.com/kilnbuild/kiln/shared/sandbox"
	"github.com/kilnbuild/kiln/shared/settings"
)

// Settings are the settings of kiln serve that kiln aws-local reads: it runs with kiln serve's
// operator interface (cmd/kiln reads them with app.LoadConfig and passes them on).
type Settings struct {
	// Addr is where the API listens (KILN_ADDR).
	Addr string
	// Data holds all of aws-local's state, under Data/aws-local (KILN_DATA).
	Data string
	// PublicURL is the API's URL as its users reach it (KILN_PUBLIC_URL); "": http:// and the
	// address the API listens on.
	PublicURL string
	// Engines is the directory of the engines the build hosts provide (KILN_ENGINES).
	Engines string
	// Workers is how many build hosts run at once (KILN_WORKERS).
	Workers int
	// GitHub is the GitHub App (KILN_GITHUB_*); nil: none. GitHubWebhookSecret checks its
	// webhooks' signatures.
	GitHub              *github.Client
	GitHubWebhookSecret string
	// SignUp opens GitHub sign-in and self-service organizations (KILN_SIGNUP=github), through
	// GitHub's OAuth client.
	SignUp bool
	// Perforce checks and reads customers' Perforce servers for the API.
	Perforce *perforce.Verifier
	// P4 is the hosts' Perforce client (KILN_P4); Sandbox how they confine builds (KILN_SANDBOX),
	// with bubblewrap at Bwrap (KILN_BWRAP).
	P4, Sandbox, Bwrap string
	// OutboundAllow are the ranges a customer's address may be in although not public.
	OutboundAllow []netip.Prefix
	// RateLimit is the API's requests per second per token; 0 turns it off.
	RateLimit float64
	// SMTPURL and SMTPFrom send build notifications; an empty SMTPURL turns them off.
	SMTPURL, SMTPFrom string
	// Plans is the plans' limits.
	Plans kiln.PlanTable
	// BuildTimeout is how long a build may run; BuildUIDs the uids the hosts run as, one per
	// build, when the buildspec names a run-as user and aws-local runs as root.
	BuildTimeout time.Duration
	BuildUIDs    sandbox.UIDRange
	// ArtifactMax is an artifact's largest size; ArtifactRetention how long artifacts are kept.
	ArtifactMax       int64
	ArtifactRetention time.Duration
	// DeliveryAttempts and DeliveryBackoff bound an auto-deploy delivery's retries.
	DeliveryAttempts int
	DeliveryBackoff  time.Duration
	// CacheMaxPerOrg caps the bytes of one organization's build caches (KILN_CACHE_MAX_PER_ORG).
	CacheMaxPerOrg int64
	// CodeBuildQuota is the CodeBuild stand-in's concurrent-builds quota, which the task function
	// shares between organizations too (KILN_CODEBUILD_QUOTA); 0: its default, 20.
	CodeBuildQuota int
}

// codeBuildQuota is cfg's CodeBuild quota, or KILN_CODEBUILD_QUOTA's default.
func codeBuildQuota(cfg Settings) int {
	if cfg.CodeBuildQuota > 0 {
		return cfg.CodeBuildQuota
	}
	n, _ := settings.CodeBuildQuota.Read(func(string) string { return "" })
	return n
}
