package awslocalapp

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsssm "github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/kilnbuild/kiln/shared/awslocal/iam"
	"github.com/kilnbuild/kiln/shared/awslocal/ssm"
	"github.com/kilnbuild/kiln/shared/hostcred/ssmparam"
)

// HostCredentialPath is the Parameter Store path of the CodeBuild hosts' credentials:
// the stack's, "/<stack name>/hosts", the stack being Kiln (infra/main.go).
const HostCredentialPath = "/Kiln/hosts"

// startParameterStore starts the SSM stand-in behind its IAM check and returns its URL.
func (l *AWSLocal) startParameterStore() (string, error) {
	u, serve, err := l.listen()
	if err != nil {
		return "", err
	}
	l.params = &ssm.Server{Region: Region, Account: awsLocalAccount}
	serve(&iam.Guard{Auth: l.iam.auth, Service: iam.SSM{ARNs: awsLocalARNs}, Next: l.params, Logger: l.logger})
	return u, nil
}

// ssmClientOf is a principal's Parameter Store client, through the IAM check.
func ssmClientOf(principal, ssmURL string) *awsssm.Client {
	return awsssm.NewFromConfig(awsConfigOf(principal), func(o *awsssm.Options) { o.BaseEndpoint = aws.String(ssmURL) })
}

// hostCredentialsOf is where a principal's functions keep the CodeBuild hosts' credentials.
func hostCredentialsOf(principal, ssmURL string) ssmparam.Store {
	return ssmparam.Store{Client: ssmClientOf(principal, ssmURL)}
}

// codeBuildParameters resolves a host build's PARAMETER_STORE variables as CodeBuild does when
// the build starts: GetParameters with decryption, signed as the project's service role, so a
// role that may not read them fails the build.
func codeBuildParameters(ssmURL string) func(ctx context.Context, names []string) (map[string]string, error) {
	client := ssmClientOf(iam.CodeBuildPrincipal, ssmURL)
	return func(ctx context.Context, names []string) (map[string]string, error) {
		out, err := client.GetParameters(ctx, &awsssm.GetParametersInput{Names: names, WithDecryption: aws.Bool(true)})
		if err != nil {
			return nil, err
		}
		if len(out.InvalidParameters) > 0 {
			return nil, fmt.Errorf("parameter does not exist: %s", strings.Join(out.InvalidParameters, ", "))
		}
		values := map[string]string{}
		for _, p := range out.Parameters {
			values[aws.ToString(p.Name)] = aws.ToString(p.Value)
		}
		return values, nil
	}
}
