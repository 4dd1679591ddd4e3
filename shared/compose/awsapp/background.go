package awsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/compose/core"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/settings"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
	"github.com/kilnbuild/kiln/shared/webhooks"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// BackgroundConfig is the configuration of the Lambdas that work behind the API (schedule and
// deliver): the API's settings and the delivery and retention ones, from their environment.
type BackgroundConfig struct {
	AWSConfig
	// ArtifactRetention is how long artifacts are kept (KILN_ARTIFACT_RETENTION, default 30d).
	ArtifactRetention time.Duration
	// DeliveryAttempts and DeliveryBackoff shape the retries of deliveries (KILN_DELIVERY_ATTEMPTS,
	// default 5; KILN_DELIVERY_BACKOFF, default 2s).
	DeliveryAttempts int
	DeliveryBackoff  time.Duration
}

// LoadBackgroundConfig reads and checks the environment of the schedule and deliver Lambdas.
func LoadBackgroundConfig(getenv func(string) string) (BackgroundConfig, error) {
	api, err := LoadAWSConfig(getenv)
	c := BackgroundConfig{AWSConfig: api}
	if err != nil {
		return c, err
	}
	if c.DeliveryQueueURL == "" {
		return c, errors.New("KILN_DELIVERY_QUEUE_URL is not set")
	}
	c.ArtifactRetention = c.LogRetention // settings.ArtifactRetention, read by LoadAWSConfig
	if c.DeliveryAttempts, err = settings.DeliveryAttempts.Read(getenv); err != nil {
		return c, err
	}
	if c.DeliveryBackoff, err = settings.DeliveryBackoff.Read(getenv); err != nil {
		return c, err
	}
	return c, nil
}

// Parts are the ready parts the API, schedule and deliver compositions work on. The Lambdas
// load them from AWS (LoadParts); tests and kiln aws-local pass their own.
type Parts struct {
	Store     store.Store
	Logs      BuildLogs // build logs: read by the API, ended by the lifecycle's events
	Artifacts artifacts.Store
	Keys      *keyring.Keyring
	// GitHub is the GitHub App (nil: none): the API's, and the one the functions that end builds
	// (task, ended, schedule) post final commit statuses with. The deliver function has none.
	GitHub *GitHubApp
	// Perforce checks Perforce credentials for the API (nil: none, as in the API Lambda, which
	// carries no p4 client; kiln aws-local passes KILN_P4's, as kiln serve does).
	Perforce httpapi.PerforceVerifier
	// Workflow starts scheduled builds and stops the builds a tick failed.
	Workflow builds.Workflow
	// Queue takes delivery attempts (SQS in AWS).
	Queue DeliveryQueue
	// TaskHeartbeats passes the hosts' heartbeats on to Step Functions (nil: none); only the API
	// uses it.
	TaskHeartbeats agentapi.TaskHeartbeats
	// HostedHosts are the hosted pools' clients (zero without them): the API checks hosts in
	// the groups, the schedule publishes the metrics and terminates hosts.
	HostedHosts HostedHostsClients
	// HostCredentials keeps CodeBuild hosts' credentials (Parameter Store): the task function
	// puts them, the task and ended functions delete them (nil: a CodeBuild claim fails).
	HostCredentials sfn.HostCredentials
	// Live reaches the sockets of live build events (zero: none).
	Live   LiveParts
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// LoadParts makes the DynamoDB store and logs, the S3 artifacts, the SQS delivery queue and the
// workflow, each client honouring the AWS SDK's endpoint settings (AWS_ENDPOINT_URL_DYNAMODB,
// ..._S3, ..._SQS, ..._SFN, ..._CODEBUILD), and reads from Secrets Manager the secrets a
// function may read (the deliver function opens sealed secrets and has no GitHub App; the
// schedule function posts commit statuses and may not open sealed secrets).
func LoadParts(ctx context.Context, cfg BackgroundConfig, secrets Secrets, logger *slog.Logger) (Parts, error) {
	awsCfg, keys, err := connectWith(ctx, cfg.AWSConfig, secrets.MasterKey)
	if err != nil {
		return Parts{}, err
	}
	var gh *GitHubApp
	if secrets.GitHubApp {
		if gh, err = readGitHubApp(ctx, secretsmanager.NewFromConfig(awsCfg), cfg.GitHub); err != nil {
			return Parts{}, err
		}
	}
	var arts artifacts.Store = noArtifacts{}
	if cfg.Artifacts != "" {
		if arts, err = s3artifacts.FromURL(s3artifacts.ClientFromConfig(awsCfg), cfg.Artifacts, 0); err != nil {
			return Parts{}, fmt.Errorf("KILN_ARTIFACTS: %w", err)
		}
	}
	db := dynamo.New(awsCfg)
	return Parts{
		Store: dynamostore.New(db, cfg.Table), Logs: newLogs(db, cfg.AWSConfig), Artifacts: arts, Keys: keys, GitHub: gh,
		Workflow: newWorkflow(awsCfg, cfg.Workflow, logger), Queue: &SQSQueue{Client: sqs.NewFromConfig(awsCfg), URL: cfg.DeliveryQueueURL, Logger: logger},
		TaskHeartbeats: newTaskHeartbeats(awsCfg, cfg.Workflow, logger), HostedHosts: newHostedHostsClients(awsCfg, cfg.HostedHosts), Logger: logger,
		Live: newLiveParts(awsCfg, db, cfg.AWSConfig),
	}, nil
}

// Secrets are the secrets LoadParts reads: each function reads only those its role grants.
type Secrets struct {
	MasterKey bool // the master key that opens sealed secrets (deliver)
	GitHubApp bool // the GitHub App's key, for commit statuses (schedule)
}

// background is the delivery side of kiln and the lifecycle whose events feed it, wired as the
// API wires them: a build changed here records its org webhook deliveries, mails its user and,
// once complete with auto deploy pending, asks the queue for a sweep.
type background struct {
	core      *core.Core
	lifecycle *builds.Lifecycle
	deliverer *builds.AutoDeployer
	hooks     *webhooks.Sender
}

func newBackground(cfg BackgroundConfig, p Parts) (*background, error) {
	c, err := core.New(core.Parts{Store: p.Store, Logs: p.Logs, Artifacts: p.Artifacts, Keys: p.Keys, GitHub: githubClient(p.GitHub),
		Workflow: p.Workflow, DeliveryWaker: QueueWaker(p.Queue, p.Logger), Logger: p.Logger, Now: p.Now, Engines: cfg.Engines,
		LiveRegistry: p.Live.Registry, LiveSender: p.Live.Sender}, cfg.coreSettings())
	if err != nil {
		return nil, err
	}
	return &background{core: c, lifecycle: c.Lifecycle, deliverer: c.AutoDeployer, hooks: c.Webhooks}, nil
}
