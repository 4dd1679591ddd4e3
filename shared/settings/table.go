package settings

import (
	"net/netip"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/outbound"
)

// The settings more than one deployment reads, each with its parser.
var (
	PublicURL = Setting[string]{Row{"KILN_PUBLIC_URL", "",
		"the base URL users and build hosts reach kiln at: signed download links, mail and commit statuses start with it " +
			"(kiln serve: default http://$KILN_ADDR; AWS: required by the task function and with KILN_SMTP_URL)",
		KindPublicURL, Serve | Lambdas}, ParsePublicURL}
	RateLimit = Setting[float64]{Row{"KILN_RATE_LIMIT", "10",
		"API requests per second per token (bursts of four times that); 0 turns the limit off",
		KindRate, Serve | Lambdas}, ParseRate}
	Artifacts = Setting[string]{Row{"KILN_ARTIFACTS", "file",
		"where artifacts are kept: file (under KILN_DATA) or s3://bucket[/prefix] (AWS S3 or MinIO, with the AWS SDK's settings: " +
			"AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL_S3); the AWS functions take only s3:// (unset: none yet)",
		KindArtifactStore, Serve | Lambdas}, ParseArtifactStore}
	SMTPURL = Setting[string]{Row{"KILN_SMTP_URL", "",
		"mail server for build notifications: smtp://user:pass@host:587 or smtps://...:465 (prefer the environment to the flag)",
		KindSMTPURL, Serve | Lambdas}, ParseSMTPURL}
	SMTPFrom = Setting[string]{Row{"KILN_SMTP_FROM", "kiln <kiln@localhost>",
		"From address of build notifications",
		KindText, Serve | Lambdas}, text}
	OutboundAllow = Setting[[]netip.Prefix]{Row{"KILN_OUTBOUND_ALLOW", "",
		"comma-separated CIDR ranges customer-supplied addresses may reach although not public",
		KindCIDRs, Serve | Lambdas}, outbound.ParseAllow}
	Plans = Setting[kiln.PlanTable]{Row{"KILN_PLANS", "",
		"JSON file overriding the plans' limits, e.g. {\"free\": {\"buildMinutesPerMonth\": 600}} (docs/plans.md); default: free 300 minutes/month, " +
			"1 build at once, 1 project, no Perforce or auto deploy; pro and enterprise unlimited",
		KindPlansFile, Serve | Lambdas}, ParsePlans}
	ArtifactRetention = Setting[time.Duration]{Row{"KILN_ARTIFACT_RETENTION", "30d",
		"how long artifacts are kept (e.g. 30d, 72h); their builds stay, their logs are kept as long",
		KindDays, Serve | Lambdas}, ParseDays}
	DeliveryAttempts = Setting[int]{Row{"KILN_DELIVERY_ATTEMPTS", "5",
		"delivery attempts before autoDeployStatus is failed",
		KindCount, Serve | Background}, ParseCount}
	DeliveryBackoff = Setting[time.Duration]{Row{"KILN_DELIVERY_BACKOFF", "2s",
		"first retry delay (doubles each time)",
		KindDuration, Serve | Background}, ParseDuration("2s")}
	BuildTimeout = Setting[time.Duration]{Row{"KILN_BUILD_TIMEOUT", "4h",
		"how long a build may run before it is stopped and fails with \"time limit\"",
		KindDuration, Serve | Lambdas}, ParseDuration("4h or 90m")}
	GitHubAPIURL = Setting[string]{Row{"KILN_GITHUB_API_URL", "https://api.github.com/",
		"GitHub REST base URL",
		KindHTTPBase, Serve | Lambdas}, ParseHTTPBase}
	CacheMaxPerOrg = Setting[int64]{Row{"KILN_CACHE_MAX_PER_ORG", "100GiB",
		"the most one organization's build caches may hold (compressed; e.g. 100GiB, 500MiB); past it the oldest are removed",
		KindSize, Serve | Lambdas}, ParseSize}
	SignUp = Setting[bool]{Row{"KILN_SIGNUP", "off",
		"github: anyone may sign in to the console with GitHub (the App's OAuth client) and create organizations on the free plan; " +
			"off: people join by an operator or an invitation and sign in with API tokens",
		KindSignUp, Serve | Lambdas}, ParseSignUp}
	GitHubClientID = Setting[string]{Row{"KILN_GITHUB_CLIENT_ID", "",
		"the GitHub App's OAuth client id: GitHub sign-in (KILN_SIGNUP=github) and the verified install flow " +
			"(its secret on kiln serve: KILN_GITHUB_CLIENT_SECRET; on AWS: \"clientSecret\" in the App's secret)",
		KindText, Serve | Lambdas}, text}
	GitHubWebURL = Setting[string]{Row{"KILN_GITHUB_WEB_URL", "https://github.com/",
		"GitHub web base URL (the install page, sign-in and the OAuth token exchange)",
		KindHTTPBase, Serve | Lambdas}, ParseHTTPBase}
	CodeBuildQuota = Setting[int]{Row{"KILN_CODEBUILD_QUOTA", "20",
		"builds that may hold a CodeBuild build host at once (the account's concurrent-builds quota); more wait pending, " +
			"organizations taking turns (kiln aws-local: its CodeBuild stand-in refuses StartBuild past it too)",
		KindCount, Lambdas | AWSLocal}, ParseCount}
	GitHubAppID = Setting[int64]{Row{"KILN_GITHUB_APP_ID", "",
		"the GitHub App's id",
		KindAppID, Serve | Lambdas}, ParseAppID}
)

// Table is the registry: every KILN_* setting a kiln program reads, one row each. First the
// settings more than one deployment parses (above, with their parsers), then each program's own:
// kiln serve's (serve.go), the AWS functions' (lambdas.go), kiln agent's (agent.go), kiln
// aws-local's and what kiln tells the processes it starts (awslocal.go), the CLI's (cli.go).
// The variables only tests read are TestOnly (testonly.go), apart.
var Table = concat(
	[]Row{
		PublicURL.Row, RateLimit.Row, Artifacts.Row, SMTPURL.Row, SMTPFrom.Row, OutboundAllow.Row, Plans.Row,
		ArtifactRetention.Row, DeliveryAttempts.Row, DeliveryBackoff.Row, BuildTimeout.Row, GitHubAPIURL.Row, GitHubAppID.Row,
		CacheMaxPerOrg.Row, SignUp.Row, GitHubClientID.Row, GitHubWebURL.Row, CodeBuildQuota.Row,
	},
	serveRows, lambdaRows, agentRows, awsLocalRows, childRows, cliRows,
)

func concat(groups ...[]Row) []Row {
	var out []Row
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func text(v string) (string, error) { return v, nil }
