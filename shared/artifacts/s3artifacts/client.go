package s3artifacts

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// NewClient makes an S3 client with the AWS SDK's standard settings: AWS_REGION (or the shared
// config file), credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the default chain
// (profile, web identity, container or instance role), and AWS_ENDPOINT_URL_S3 (or
// AWS_ENDPOINT_URL) for an S3-compatible server such as MinIO, which is then addressed
// path-style (http://host/bucket/key), as such servers expect.
func NewClient(ctx context.Context) (*s3.Client, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set AWS_REGION (us-east-1 for MinIO unless it was configured otherwise)")
	}
	return ClientFromConfig(cfg), nil
}

// ClientFromConfig makes an S3 client from an already loaded AWS configuration, path-style when
// an endpoint URL is set, as NewClient does.
func ClientFromConfig(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = o.BaseEndpoint != nil
	})
}
