// Package awsapp composes kiln's API for the AWS deployment: the same router as `kiln serve`, on
// DynamoDB, with the same build lifecycle and the same events (org webhooks and mail). It builds
// only from packages a Lambda can carry: no SQLite, no agent, no packaging, no sandbox.
package awsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/compose/core"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
	"github.com/kilnbuild/kiln/shared/settings"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// AWSConfig is the configuration of the API Lambda, from its environment (set by the CDK stack).
type AWSConfig struct {
	// Table is the DynamoDB table (KILN_DYNAMODB_TABLE).
	Table string
	// MasterKeySecretARN names the Secrets Manager secret holding the master key
	// (KILN_MASTER_KEY_SECRET_ARN).
	MasterKeySecretARN string
	// RateLimit is requests per second per token within one Lambda instance (KILN_RATE_LIMIT).
	RateLimit float64
	// Engines are the engine versions the build hosts provide (KILN_ENGINE_VERSIONS, e.g. "5.3,5.4").
	Engines engines.Versions
	// Artifacts is the artifacts' bucket, s3://bucket[/prefix] (KILN_ARTIFACTS); empty: none yet.
	Artifacts string
	// SMTPURL is the mail server for build notifications (KILN_SMTP_URL); empty sends no mail.
	// SMTPFrom is their From address (KILN_SMTP_FROM), PublicURL the API's base URL that download
	// links in them start with (KILN_PUBLIC_URL).
	SMTPURL, SMTPFrom, PublicURL string
	// OutboundAllow are ranges customer-supplied addresses may reach although not public
	// (KILN_OUTBOUND_ALLOW, comma-separated CIDR ranges), as in kiln serve.
	OutboundAllow []netip.Prefix
	// DeliveryQueueURL is the SQS queue of delivery attempts (KILN_DELIVERY_QUEUE_URL): a build
	// the API completes with auto deploy pending is queued there at once. Empty in the API: the
	// schedule's tick finds it within a minute. The schedule and deliver Lambdas require it.
	DeliveryQueueURL string
	// Workflow is where builds run: the state machine and its build hosts (see workflow.go).
	Workflow WorkflowConfig
	// HostedHosts are kiln's own pools of Windows and Linux EC2 hosts (see hostedhosts.go).
	HostedHosts HostedHostsConfig
	// GitHub is the GitHub App (KILN_GITHUB_*; see GitHubConfig).
	GitHub GitHubConfig
	// Plans is the plans' limits (KILN_PLANS: a JSON file in the function's package, as on one
	// machine; nil: the defaults).
	Plans kiln.PlanTable
	// LogRetention is how long a build's log is kept from the build's creation: as long as its
	// artifact (KILN_ARTIFACT_RETENTION, default 30d). Its log chunks carry the expiry in "ttl",
	// the table's time-to-live attribute.
	LogRetention time.Duration
	// CacheMaxPerOrg caps the bytes of one organization's build caches (KILN_CACHE_MAX_PER_ORG).
	CacheMaxPerOrg int64
	// LiveEndpoint is the WebSocket API's @connections endpoint (KILN_LIVE_ENDPOINT), where
	// build events are posted to the sockets; empty: none.
	LiveEndpoint string
}

// newLogs is the build log store on the table, with the deployment's log retention.
func newLogs(db *dynamo.DB, cfg AWSConfig) *dynamostore.Logs {
	logs := dynamostore.NewLogs(db, cfg.Table)
	logs.SetRetention(cfg.LogRetention, nil)
	return logs
}

// LoadAWSConfig reads and checks the Lambda's environment. The settings kiln serve reads too
// are read through their rows in shared/settings: the same defaults, checks and errors.
func LoadAWSConfig(getenv func(string) string) (AWSConfig, error) {
	c := AWSConfig{Table: settings.DynamoDBTable.Get(getenv), MasterKeySecretARN: settings.MasterKeySecretARN.Get(getenv),
		DeliveryQueueURL: settings.DeliveryQueueURL.Get(getenv)}
	if c.Table == "" {
		return c, errors.New("KILN_DYNAMODB_TABLE is not set")
	}
	if c.MasterKeySecretARN == "" {
		return c, errors.New("KILN_MASTER_KEY_SECRET_ARN is not set")
	}
	var err error
	if c.PublicURL, err = settings.PublicURL.Read(getenv); err != nil {
		return c, err
	}
	if c.SMTPURL, err = settings.SMTPURL.Read(getenv); err != nil {
		return c, err
	}
	if c.SMTPFrom, err = settings.SMTPFrom.Read(getenv); err != nil {
		return c, err
	}
	if c.LogRetention, err = settings.ArtifactRetention.Read(getenv); err != nil {
		return c, err
	}
	if c.Plans, err = settings.Plans.Read(getenv); err != nil {
		return c, err
	}
	if c.CacheMaxPerOrg, err = settings.CacheMaxPerOrg.Read(getenv); err != nil {
		return c, err
	}
	versions, err := engines.ParseVersions(settings.EngineVersions.Get(getenv))
	if err != nil {
		return c, fmt.Errorf("KILN_ENGINE_VERSIONS: %w", err)
	}
	c.Engines = versions
	if c.GitHub, err = loadGitHubConfig(getenv); err != nil {
		return c, err
	}
	// Unset: no artifact store yet (settings.Artifacts' default, file, is kiln serve's disk).
	if v := getenv(settings.Artifacts.Name); v != "" {
		if err := settings.ParseS3Store(v); err != nil {
			return c, fmt.Errorf("KILN_ARTIFACTS: the AWS deployment keeps artifacts in S3: %w", err)
		}
		c.Artifacts = v
	}
	if c.OutboundAllow, err = settings.OutboundAllow.Read(getenv); err != nil {
		return c, err
	}
	if c.RateLimit, err = settings.RateLimit.Read(getenv); err != nil {
		return c, err
	}
	if c.LiveEndpoint, err = settings.ParsePublicURL(settings.LiveEndpoint.Get(getenv)); err != nil {
		return c, fmt.Errorf("%s: %w", settings.LiveEndpoint.Name, err)
	}
	if err := c.Workflow.load(getenv); err != nil {
		return c, err
	}
	if err := c.HostedHosts.load(getenv); err != nil {
		return c, err
	}
	if c.SMTPURL != "" && c.PublicURL == "" {
		return c, errors.New("KILN_PUBLIC_URL is not set: build notifications (KILN_SMTP_URL) link to downloads under it")
	}
	return c, nil
}

// NewAWSAPI builds the API handler the API Lambda serves: the same router as `kiln serve`, on
// DynamoDB, with the master key from Secrets Manager.
func NewAWSAPI(ctx context.Context, cfg AWSConfig, logger *slog.Logger) (http.Handler, error) {
	awsCfg, keys, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var arts artifacts.Store = noArtifacts{}
	if cfg.Artifacts != "" {
		if arts, err = s3artifacts.FromURL(s3artifacts.ClientFromConfig(awsCfg), cfg.Artifacts, 0); err != nil {
			return nil, fmt.Errorf("KILN_ARTIFACTS: %w", err)
		}
	}
	gh, err := readGitHubApp(ctx, secretsmanager.NewFromConfig(awsCfg), cfg.GitHub)
	if err != nil {
		return nil, err
	}
	db := dynamo.New(awsCfg)
	var queue DeliveryQueue
	if cfg.DeliveryQueueURL != "" {
		queue = &SQSQueue{Client: sqs.NewFromConfig(awsCfg), URL: cfg.DeliveryQueueURL, Logger: logger}
	}
	return newAPI(cfg, dynamostore.New(db, cfg.Table), newLogs(db, cfg), arts, keys, gh, nil, newWorkflow(awsCfg, cfg.Workflow, logger), queue,
		newTaskHeartbeats(awsCfg, cfg.Workflow, logger), newHostedHostsClients(awsCfg, cfg.HostedHosts), logger, newLiveParts(awsCfg, db, cfg))
}

// connect loads the AWS configuration (endpoints overridable by AWS_ENDPOINT_URL_*) and the
// master key from Secrets Manager.
func connect(ctx context.Context, cfg AWSConfig) (aws.Config, *keyring.Keyring, error) {
	return connectWith(ctx, cfg, true)
}

// connectWith is connect, reading the master key only when masterKey is set: functions that
// neither send webhooks nor sign download links (task, ended, schedule) may not read it.
func connectWith(ctx context.Context, cfg AWSConfig, masterKey bool) (aws.Config, *keyring.Keyring, error) {
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	if !masterKey {
		return awsCfg, nil, nil
	}
	secret, err := secretsmanager.NewFromConfig(awsCfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{
		SecretId: aws.String(cfg.MasterKeySecretARN),
	})
	if err != nil {
		return aws.Config{}, nil, fmt.Errorf("read the master key secret: %w", err)
	}
	keys, err := keyring.FromSecretString(aws.ToString(secret.SecretString))
	if err != nil {
		return aws.Config{}, nil, err
	}
	return awsCfg, keys, nil
}

// buildLogs is where build logs are kept: read by the API, ended by the lifecycle's events.
type buildLogs = core.Logs

// newAPI wires the API on a store. Status changes of builds (cancel, supersede, a build that
// could not start) go through the lifecycle and tell the same events as on one machine: org
// webhook deliveries are recorded in the store (their sending is the delivery worker's), and
// the user who triggered an ended build gets mail when a mail server is configured.
//
// A host's heartbeat carrying a task token is passed on to beats (nil: none); when beats also
// hears of ended builds (SFNHeartbeats), a build with a task token that ends answers it.
func newAPI(cfg AWSConfig, st store.Store, logs buildLogs, arts artifacts.Store, keys *keyring.Keyring, gh *GitHubApp, p4 httpapi.PerforceVerifier, workflow builds.Workflow, queue DeliveryQueue,
	beats agentapi.TaskHeartbeats, hostClients HostedHostsClients, logger *slog.Logger, lp LiveParts) (http.Handler, error) {
	hosted, err := cfg.HostedHosts.authenticator(hostClients, logger)
	if err != nil {
		return nil, err
	}
	parts := core.Parts{Store: st, Logs: logs, Artifacts: arts, Keys: keys, GitHub: githubClient(gh), Workflow: workflow,
		DeliveryWaker: QueueWaker(queue, logger), Logger: logger, Engines: cfg.Engines, LiveRegistry: lp.Registry, LiveSender: lp.Sender}
	if ends, ok := beats.(builds.Ended); ok {
		parts.Ended = ends // a build that ends here (an agent's report, a cancel) answers its task token
	}
	c, err := core.New(parts, cfg.coreSettings())
	if err != nil {
		return nil, err
	}
	apiCfg := c.API()
	apiCfg.Perforce = p4
	apiCfg.Engines = cfg.Engines
	apiCfg.BuildTimeLimit = cfg.Workflow.BuildTimeLimit
	// API Gateway holds whole answers, up to Lambda's 6 MB and its own 30 s: logs are paged.
	apiCfg.BufferedAnswers = true
	api := httpapi.New(withGitHub(apiCfg, gh))
	// Where this API runs p4 (kiln aws-local), it logs in with a saved Perforce password for
	// the hosts' tickets; elsewhere hosts get the saved ticket.
	var renew *perforce.Connector
	if v, ok := p4.(*perforce.Verifier); ok && v != nil {
		renew = &perforce.Connector{Verifier: v, Open: keys.Sealer().Open, Store: st, Seal: keys.Sealer().Seal, Logger: logger}
	}
	return withHostAPI(api, st, c, logs, arts, keys, gh, beats, hosted, cfg.PublicURL, renew, cfg.Workflow.BuildTimeLimit, logger), nil
}
