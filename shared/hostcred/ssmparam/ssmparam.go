// Package ssmparam keeps build hosts' credentials in AWS Systems Manager Parameter Store, as
// SecureString parameters of the standard tier encrypted with the account's AWS managed key
// (aws/ssm), for sfn.HostCredentials: CodeBuild reads such a parameter at a build's start (a
// PARAMETER_STORE environment variable) with the project's service role.
package ssmparam

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

// Client is the part of the SSM API the store uses (*ssm.Client).
type Client interface {
	PutParameter(ctx context.Context, in *ssm.PutParameterInput, opts ...func(*ssm.Options)) (*ssm.PutParameterOutput, error)
	DeleteParameter(ctx context.Context, in *ssm.DeleteParameterInput, opts ...func(*ssm.Options)) (*ssm.DeleteParameterOutput, error)
}

// Store puts and deletes the parameters.
type Store struct{ Client Client }

// Put stores value as the SecureString parameter name, replacing one of that name. No KeyId:
// Parameter Store encrypts it with aws/ssm, whose key policy lets every principal of the
// account that may call Parameter Store use it, so no kms: permission is granted anywhere.
func (s Store) Put(ctx context.Context, name, value string) error {
	_, err := s.Client.PutParameter(ctx, &ssm.PutParameterInput{
		Name: aws.String(name), Value: aws.String(value), Type: types.ParameterTypeSecureString,
		Overwrite: aws.Bool(true), Tier: types.ParameterTierStandard,
		Description: aws.String("kiln: a build host's credential, deleted when the build's execution ends"),
	})
	if err != nil {
		return fmt.Errorf("ssm PutParameter %s: %w", name, err)
	}
	return nil
}

// Delete deletes the parameter name; one that does not exist (deleted already) is not an error.
func (s Store) Delete(ctx context.Context, name string) error {
	_, err := s.Client.DeleteParameter(ctx, &ssm.DeleteParameterInput{Name: aws.String(name)})
	var missing *types.ParameterNotFound
	if errors.As(err, &missing) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ssm DeleteParameter %s: %w", name, err)
	}
	return nil
}
