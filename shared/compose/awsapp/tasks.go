package awsapp

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/compose/core"
	"github.com/kilnbuild/kiln/shared/hostcred/ssmparam"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// Functions are the handlers of the build workflow's Lambdas: Task for the state machine's task
// states, Ended for the rule on executions that ended FAILED, TIMED_OUT or ABORTED.
type Functions struct {
	Task  *sfn.Tasks
	Ended *sfn.Ended
}

// NewFunctions builds the workflow's Lambda handlers on DynamoDB from the Lambda's environment.
func NewFunctions(ctx context.Context, cfg AWSConfig, logger *slog.Logger) (*Functions, error) {
	awsCfg, _, err := connectWith(ctx, cfg, false) // tasks fail builds, never complete one: no master key
	if err != nil {
		return nil, err
	}
	// The GitHub App posts the final commit status of the builds these functions end.
	gh, err := readGitHubApp(ctx, secretsmanager.NewFromConfig(awsCfg), cfg.GitHub)
	if err != nil {
		return nil, err
	}
	db := dynamo.New(awsCfg)
	return newFunctions(cfg, dynamostore.New(db, cfg.Table), newLogs(db, cfg), nil, gh, ssmparam.Store{Client: ssm.NewFromConfig(awsCfg)}, logger, newLiveParts(awsCfg, db, cfg))
}

// NewFunctionsFromParts builds the workflow's Lambda handlers from ready parts (kiln aws-local).
func NewFunctionsFromParts(cfg AWSConfig, p Parts) (*Functions, error) {
	return newFunctions(cfg, p.Store, p.Logs, p.Keys, p.GitHub, p.HostCredentials, p.Logger, p.Live)
}

// newFunctions wires the workflow's handlers on a store (tests and kiln aws-local inject theirs).
// A build they end gets its final commit status through gh (none when nil). CodeBuild hosts'
// credentials go to params under cfg.Workflow.HostCredentialPath.
func newFunctions(cfg AWSConfig, st store.Store, logs buildLogs, keys *keyring.Keyring, gh *GitHubApp, params sfn.HostCredentials, logger *slog.Logger, lp LiveParts) (*Functions, error) {
	if cfg.PublicURL == "" {
		return nil, errors.New("KILN_PUBLIC_URL is not set: build hosts report to the API under it")
	}
	c, err := core.New(core.Parts{Store: st, Logs: logs, Keys: keys, GitHub: githubClient(gh), Logger: logger,
		LiveRegistry: lp.Registry, LiveSender: lp.Sender}, cfg.coreSettings())
	if err != nil {
		return nil, err
	}
	lifecycle := c.Lifecycle
	creds := sfn.HostCredentialStore{Params: params, Path: cfg.Workflow.HostCredentialPath}
	return &Functions{
		Task: &sfn.Tasks{Store: st, Lifecycle: lifecycle, Images: cfg.Workflow.HostImages, HostURL: cfg.PublicURL,
			TimeLimit: cfg.Workflow.BuildTimeLimit, HostedWindows: cfg.HostedHosts.Windows.Group != "",
			HostedLinuxVersions: cfg.HostedHosts.linuxVersions(), Logger: logger, Slots: c.Plans,
			Capacity: &sfn.Capacity{Store: st, Quota: cfg.Workflow.CodeBuildQuota}, Credentials: creds},
		Ended: &sfn.Ended{Lifecycle: lifecycle, Logger: logger, Credentials: creds},
	}, nil
}
