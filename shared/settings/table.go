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
	GitHubAppID = Setting[int64]{Row{"KILN_GITHUB_APP_ID", "",
		"the GitHub App's id",
		KindAppID, Serve | Lambdas}, ParseAppID}
)

// Table is every setting listed here: first the shared ones above, then those only one
// deployment reads, which it parses itself (KindOwn). kiln serve's own settings (KILN_ADDR,
// KILN_DATA, the sandbox's and the build limits) are in its own table, shared/app/config.go.
var Table = []Row{
	PublicURL.Row, RateLimit.Row, Artifacts.Row, SMTPURL.Row, SMTPFrom.Row, OutboundAllow.Row, Plans.Row,
	ArtifactRetention.Row, DeliveryAttempts.Row, DeliveryBackoff.Row, BuildTimeout.Row, GitHubAPIURL.Row, GitHubAppID.Row, CacheMaxPerOrg.Row, SignUp.Row, GitHubClientID.Row, GitHubWebURL.Row,

	{"KILN_DYNAMODB_TABLE", "", "the DynamoDB table (required)", KindOwn, Lambdas},
	{"KILN_MASTER_KEY_SECRET_ARN", "", "the Secrets Manager secret holding the master key (required)", KindOwn, Lambdas},
	{"KILN_ENGINE_VERSIONS", "", "the engine versions the build hosts provide, e.g. 5.3,5.4", KindOwn, Lambdas},
	{"KILN_DELIVERY_QUEUE_URL", "", "the SQS queue of delivery attempts (required by schedule and deliver)", KindOwn, Lambdas},
	{"KILN_GITHUB_APP_SLUG", "", "the GitHub App's slug", KindOwn, Lambdas},
	{"KILN_GITHUB_SECRET_ARN", "", "the Secrets Manager secret holding the GitHub App's {\"privateKey\",\"webhookSecret\"} and, for KILN_SIGNUP=github, \"clientSecret\"", KindOwn, Lambdas},
	{"KILN_STATE_MACHINE_ARN", "", "the builds' state machine; unset: builds do not run", KindOwn, Lambdas},
	{"KILN_HOST_PROJECT", "", "the CodeBuild project of the Linux build hosts", KindOwn, Lambdas},
	{"KILN_HOST_IMAGES", "", "JSON object of engine version to build host image", KindOwn, Lambdas},
	{"KILN_HOST_CREDENTIAL_PATH", "", "the Parameter Store path of the CodeBuild hosts' credentials", KindOwn, Lambdas},
	{"KILN_WINDOWS_HOST_GROUP", "", "the hosted Windows hosts' Auto Scaling group; unset: none", KindOwn, Lambdas},
	{"KILN_AWS_ACCOUNT_ID", "", "the deployment's AWS account (12 digits)", KindOwn, Lambdas},
	{"KILN_EC2_IDENTITY_CERTS", "", "PEM certificates of the region's EC2 instance identity documents", KindOwn, Lambdas},
	{"KILN_WINDOWS_HOST_IDLE", "15m", "how long a hosted Windows host may stay in service without a build while none waits (a minute or more)", KindOwn, Lambdas},
	{"KILN_LINUX_HOST_GROUP", "", "the hosted Linux hosts' Auto Scaling group; unset: Linux builds run on CodeBuild images", KindOwn, Lambdas},
	{"KILN_LINUX_HOST_ENGINES", "", "the engine versions the hosted Linux hosts' AMI holds, e.g. 5.4 (required with KILN_LINUX_HOST_GROUP)", KindOwn, Lambdas},
	{"KILN_LINUX_HOST_IDLE", "15m", "how long a hosted Linux host may stay in service without a build while none waits (a minute or more)", KindOwn, Lambdas},
}

func text(v string) (string, error) { return v, nil }
