package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// hostCredentialPath is the Parameter Store path of the CodeBuild hosts' credentials
// (KILN_HOST_CREDENTIAL_PATH): the claim puts each build's credential at <path>/<build id> as
// a SecureString (the AWS managed key aws/ssm), RunOnCodeBuild names it to CodeBuild as a
// PARAMETER_STORE variable, and the build's end deletes it.
func (s *KilnStack) hostCredentialPath() string {
	return "/" + *s.Stack.StackName() + "/hosts"
}

// hostCredentialsArn is the ARN of every parameter under hostCredentialPath
// (arn:aws:ssm:<region>:<account>:parameter/<stack>/hosts/*: a parameter's ARN drops its
// name's leading slash).
func (s *KilnStack) hostCredentialsArn() *string {
	return s.Stack.FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("ssm"),
		Resource:     jsii.String("parameter"),
		ResourceName: jsii.String(*s.Stack.StackName() + "/hosts/*"),
		ArnFormat:    awscdk.ArnFormat_SLASH_RESOURCE_NAME,
	})
}

// allowHostCredentials grants a role the given Parameter Store actions on the hosts'
// credentials only. No kms: action: the parameters use the AWS managed key aws/ssm, whose key
// policy allows every principal of the account to use it through Parameter Store.
func (s *KilnStack) allowHostCredentials(role awsiam.IRole, actions ...string) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(actions...),
		Resources: &[]*string{s.hostCredentialsArn()},
	}))
}
