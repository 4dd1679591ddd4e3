package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscodebuild"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecr"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// DefaultBuildspec is the hosts' buildspec when buildspec/buildspec.yml is not given: the host
// runs one command, the kiln agent, which takes its build from the API with the per-build
// credential in its environment (KILN_HOST_URL, KILN_HOST_CREDENTIAL, KILN_BUILD_ID). It runs as
// the image's HostUser: CodeBuild runs the commands as root otherwise, which Unreal refuses.
const DefaultBuildspec = `version: 0.2
run-as: ` + HostUser + `
env:
  variables:
    KILN_HOST_WORKDIR: /home/` + HostUser + `/work
phases:
  build:
    commands:
      - kiln agent run
`

// HostUser is the non-root user of the host images the buildspec runs as (docs/deploy.md).
const HostUser = "kiln"

// HostComputeType is the CodeBuild compute type of the Linux hosts (docs/deploy.md prices it).
const HostComputeType = awscodebuild.ComputeType_LARGE

// createHosts defines the CodeBuild project the state machine starts one build of per kiln build
// (codebuild:startBuild.sync, overriding the image, the time limit and the environment). It has
// no source: the buildspec is inline, the kiln agent fetches the source itself.
//
// The host runs a tenant's code, so its role may only pull the host images, write its own
// logs (plus the report-group rights CDK gives every project, on its own report groups) and
// read the hosts' credential parameters, which CodeBuild does at a build's start to fill
// KILN_HOST_CREDENTIAL (a PARAMETER_STORE variable): no table, bucket, secret or key. It reaches
// the API with its per-build credential and S3 only through presigned URLs.
func (s *KilnStack) createHosts() {
	s.hostRepo = awsecr.Repository_FromRepositoryName(s.Stack, jsii.String("HostRepository"), jsii.String(s.props.HostRepository))
	logs := awslogs.NewLogGroup(s.Stack, jsii.String("HostLogs"), &awslogs.LogGroupProps{
		Retention: awslogs.RetentionDays_ONE_MONTH,
	})
	s.hostProject = awscodebuild.NewProject(s.Stack, jsii.String("HostProject"), &awscodebuild.ProjectProps{
		Description: jsii.String("kiln Linux build hosts (started by the build state machine)"),
		BuildSpec:   awscodebuild.BuildSpec_FromObject(&map[string]any{"version": "0.2"}), // replaced below
		Environment: &awscodebuild.BuildEnvironment{
			// The image of the first engine version; each build overrides it with its own
			// (KILN_HOST_IMAGES). fromEcrRepository pulls with the project's role.
			BuildImage:  awscodebuild.LinuxBuildImage_FromEcrRepository(s.hostRepo, jsii.String(s.props.HostImages[s.engineVersions()[0]])),
			ComputeType: HostComputeType,
			Privileged:  jsii.Bool(false),
		},
		// Each build overrides it with its setting's time limit (ClaimOutput.timeoutMinutes).
		Timeout: awscdk.Duration_Hours(jsii.Number(8)),
		// A host build waiting longer in CodeBuild's queue (the account's limit of running
		// builds reached) is ended by CodeBuild; the host's start grace counts on this bound.
		QueuedTimeout: awscdk.Duration_Minutes(jsii.Number(sfn.HostQueuedTimeoutMinutes)),
		Logging: &awscodebuild.LoggingOptions{
			CloudWatch: &awscodebuild.CloudWatchLoggingOptions{LogGroup: logs},
		},
	})
	// The buildspec as written, not re-serialized (BuildSpec.fromObject would turn it into JSON).
	cfn := s.hostProject.Node().DefaultChild().(awscodebuild.CfnProject)
	cfn.AddPropertyOverride(jsii.String("Source.BuildSpec"), jsii.String(s.props.Buildspec))
	s.allowHostCredentials(s.hostProject.Role(), "ssm:GetParameters")
}
