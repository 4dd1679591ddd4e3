package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/keyring"
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
}

// LoadAWSConfig reads and checks the Lambda's environment.
func LoadAWSConfig(getenv func(string) string) (AWSConfig, error) {
	c := AWSConfig{Table: getenv("KILN_DYNAMODB_TABLE"), MasterKeySecretARN: getenv("KILN_MASTER_KEY_SECRET_ARN"), RateLimit: 10}
	if c.Table == "" {
		return c, errors.New("KILN_DYNAMODB_TABLE is not set")
	}
	if c.MasterKeySecretARN == "" {
		return c, errors.New("KILN_MASTER_KEY_SECRET_ARN is not set")
	}
	versions, err := engines.ParseVersions(getenv("KILN_ENGINE_VERSIONS"))
	if err != nil {
		return c, fmt.Errorf("KILN_ENGINE_VERSIONS: %w", err)
	}
	c.Engines = versions
	if v := getenv("KILN_ARTIFACTS"); v != "" {
		if _, err := s3artifacts.ParseURL(v); err != nil {
			return c, fmt.Errorf("KILN_ARTIFACTS: the AWS deployment keeps artifacts in S3: %w", err)
		}
		c.Artifacts = v
	}
	if v := getenv("KILN_RATE_LIMIT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return c, errors.New("KILN_RATE_LIMIT: must be a number of requests per second, 0 or more")
		}
		c.RateLimit = f
	}
	return c, nil
}

// NewAWSAPI builds the API handler the API Lambda serves: the same router as `kiln serve`, on
// DynamoDB, with the master key from Secrets Manager.
func NewAWSAPI(ctx context.Context, cfg AWSConfig, logger *slog.Logger) (http.Handler, error) {
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	secret, err := secretsmanager.NewFromConfig(awsCfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{
		SecretId: aws.String(cfg.MasterKeySecretARN),
	})
	if err != nil {
		return nil, fmt.Errorf("read the master key secret: %w", err)
	}
	keys, err := keyring.FromSecretString(aws.ToString(secret.SecretString))
	if err != nil {
		return nil, err
	}
	st := dynamostore.New(dynamo.New(awsCfg), cfg.Table)
	var arts artifacts.Store = noArtifacts{}
	if cfg.Artifacts != "" {
		if arts, err = newS3Artifacts(s3artifacts.ClientFromConfig(awsCfg), cfg.Artifacts, 0); err != nil {
			return nil, err
		}
	}
	return httpapi.New(httpapi.Config{
		Builds:       &builds.Service{Store: st, Workflow: awsWorkflow{}, Logger: logger},
		Artifacts:    arts,
		Logs:         noLogs{},
		Store:        st,
		Keys:         keys,
		Logger:       logger,
		RateLimit:    httpapi.RateLimit{PerSecond: cfg.RateLimit, Burst: max(1, int(cfg.RateLimit*4))},
		AuthCacheTTL: authCacheTTL,
		Engines:      cfg.Engines,
	}), nil
}
