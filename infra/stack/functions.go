package stack

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
)

// function is one Lambda with its own role and log group.
type function struct {
	fn   awslambda.Function
	role awsiam.Role
}

// functionSpec is what differs between the Lambdas.
type functionSpec struct {
	name, description string
	memoryMB          float64
	timeout           awscdk.Duration
	// noStateMachine leaves KILN_STATE_MACHINE_ARN out (the task function: the state machine
	// refers to it, so it cannot refer to the state machine).
	noStateMachine bool
}

// newFunction defines a Lambda from functions/<name> (its bootstrap in LambdaAssetRoot/<name>),
// with a role holding nothing but the right to write its own log group (no
// AWSLambdaBasicExecutionRole: that one writes any log group), a log group kept a month, and the
// environment every function loads its configuration from (awsapp.LoadAWSConfig). The callers
// grant the rest.
func (s *KilnStack) newFunction(spec functionSpec) *function {
	id := functionID(spec.name)
	logs := awslogs.NewLogGroup(s.Stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention: awslogs.RetentionDays_ONE_MONTH,
	})
	role := awsiam.NewRole(s.Stack, jsii.String(id+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("kiln " + spec.name + " function"),
	})
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents"),
		Resources: &[]*string{logs.LogGroupArn()},
	}))
	env := s.environment()
	if spec.noStateMachine {
		delete(env, "KILN_STATE_MACHINE_ARN")
	}
	fn := awslambda.NewFunction(s.Stack, jsii.String(id), &awslambda.FunctionProps{
		Description:  jsii.String(spec.description),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(filepath.Join(s.props.LambdaAssetRoot, spec.name)), nil),
		MemorySize:   jsii.Number(spec.memoryMB),
		Timeout:      spec.timeout,
		Role:         role,
		LogGroup:     logs,
		Environment:  &env,
	})
	f := &function{fn: fn, role: role}
	s.functions[spec.name] = f
	return f
}

// functionID is the construct id of a function: "deliver" → "DeliverFunction", "api" → "APIFunction".
func functionID(name string) string {
	if name == "api" {
		return "APIFunction"
	}
	return strings.ToUpper(name[:1]) + name[1:] + "Function"
}

// environment is the configuration of every function (awsapp.AWSConfig). Names and ARNs are not
// secrets: a function reads only what its role grants.
func (s *KilnStack) environment() map[string]*string {
	env := map[string]*string{
		"KILN_DYNAMODB_TABLE":        s.table.TableName(),
		"KILN_MASTER_KEY_SECRET_ARN": s.masterKey.SecretArn(),
		"KILN_ARTIFACTS":             s.artifactsURL(),
		"KILN_ARTIFACT_RETENTION":    jsii.String(strconv.Itoa(s.props.ArtifactRetentionDays) + "d"),
		"KILN_PUBLIC_URL":            s.publicURL(),
		"KILN_ENGINE_VERSIONS":       jsii.String(strings.Join(s.engineVersions(), ",")),
		"KILN_HOST_PROJECT":          s.hostProject.ProjectName(),
		"KILN_HOST_IMAGES":           s.hostImagesJSON(),
		"KILN_HOST_CREDENTIAL_PATH":  jsii.String(s.hostCredentialPath()),
		"KILN_DELIVERY_QUEUE_URL":    s.queue.QueueUrl(),
	}
	if s.props.GitHubAppID != "" { // the loaders refuse the secret without the App's id (before step 2 of docs/deploy.md)
		env["KILN_GITHUB_SECRET_ARN"] = s.githubApp.SecretArn()
	}
	if s.props.SignUp {
		env["KILN_SIGNUP"] = jsii.String("github")
	}
	if s.workflow != nil {
		env["KILN_STATE_MACHINE_ARN"] = s.workflow.StateMachineArn()
	}
	if s.winHosts != nil {
		env["KILN_WINDOWS_HOST_GROUP"] = s.winHosts.group.AutoScalingGroupName()
	}
	if s.linuxHosts != nil {
		env["KILN_LINUX_HOST_GROUP"] = s.linuxHosts.group.AutoScalingGroupName()
		env["KILN_LINUX_HOST_ENGINES"] = jsii.String(strings.Join(s.props.LinuxEngineVersions, ","))
	}
	if len(s.hostGroups()) > 0 {
		env["KILN_AWS_ACCOUNT_ID"] = awscdk.Aws_ACCOUNT_ID()
	}
	for name, v := range map[string]string{
		"KILN_GITHUB_APP_ID":    s.props.GitHubAppID,
		"KILN_GITHUB_APP_SLUG":  s.props.GitHubAppSlug,
		"KILN_GITHUB_CLIENT_ID": s.props.GitHubClientID,
		"KILN_SMTP_URL":         s.props.SMTPURL,
		"KILN_SMTP_FROM":        s.props.SMTPFrom,
	} {
		if v != "" {
			env[name] = jsii.String(v)
		}
	}
	return env
}

// engineVersions are the engine versions with a host image, sorted.
func (s *KilnStack) engineVersions() []string {
	var out []string
	for v := range s.props.HostImages {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// hostImagesJSON is KILN_HOST_IMAGES: {"<engine version>": "<image URI in the host repository>"},
// in version order (a map given to Stack.ToJsonString would come out in any order, changing the
// template from one synth to the next). Versions and tags are plain (PropsFromContext checks them).
func (s *KilnStack) hostImagesJSON() *string {
	parts := []*string{jsii.String("{")}
	for i, v := range s.engineVersions() {
		sep := ""
		if i > 0 {
			sep = ","
		}
		parts = append(parts, jsii.String(sep+strconv.Quote(v)+`:"`), s.hostRepo.RepositoryUriForTag(jsii.String(s.props.HostImages[v])), jsii.String(`"`))
	}
	parts = append(parts, jsii.String("}"))
	return awscdk.Fn_Join(jsii.String(""), &parts)
}

// publicURL is KILN_PUBLIC_URL: Props.PublicURL, else the HTTP API's endpoint (no trailing slash).
func (s *KilnStack) publicURL() *string {
	if s.props.PublicURL != "" {
		return jsii.String(strings.TrimSuffix(s.props.PublicURL, "/"))
	}
	return s.httpAPI.ApiEndpoint()
}
