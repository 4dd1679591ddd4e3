// Package stack is kiln's AWS deployment as a CDK stack: the table, bucket, key and secrets
// (data.go), the Lambdas (functions.go and one file per area), the HTTP API (api.go), the build
// workflow (workflow.go), its CodeBuild hosts (hosts.go), the Windows hosts (winhosts.go),
// deliveries (delivery.go), the scheduler (schedule.go), the operators' admin function (admin.go),
// live build events (live.go: the WebSocket API and its function; distribution.go: one base URL
// for both APIs) and the alarms (alarms.go).
package stack

import (
	"cmp"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfront"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscodebuild"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecr"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Props configures the stack. The zero value of each field means its default.
type Props struct {
	awscdk.StackProps
	// LambdaAssetRoot holds one directory per function (api, task, ended, schedule, deliver,
	// admin, live), each with the function's `bootstrap` executable (Linux arm64). Default
	// DefaultLambdaAssetRoot, where `make lambdas` writes them.
	LambdaAssetRoot string
	// HostRepository is the name of the ECR repository holding the build host images (engine +
	// kiln binary; see docs/deploy.md). Default DefaultHostRepository.
	HostRepository string
	// HostImages maps each engine version the hosts provide to its image tag in HostRepository.
	// Default DefaultHostImages.
	HostImages map[string]string
	// Buildspec is the CodeBuild buildspec (YAML) of the hosts. Default DefaultBuildspec.
	Buildspec string
	// ArtifactRetentionDays is how long artifacts are kept (the schedule function's janitor
	// deletes them). Default 30.
	ArtifactRetentionDays int
	// PublicURL is the API's base URL as users and hosts reach it (a custom domain). Default: the
	// HTTP API's own endpoint.
	PublicURL string
	// GitHubAppID and GitHubAppSlug identify the GitHub App (docs/deploy.md); empty until set up.
	GitHubAppID, GitHubAppSlug string
	// GitHubClientID is the App's OAuth client id; SignUp opens GitHub sign-in and self-service
	// organizations (KILN_SIGNUP=github), which need it.
	GitHubClientID string
	SignUp         bool
	// SMTPURL and SMTPFrom configure build notification mail; empty sends none.
	SMTPURL, SMTPFrom string
	// Tracing turns on X-Ray tracing of the state machine.
	Tracing bool
	// WindowsAMI is the AMI of the Windows build hosts (Windows Server, the engine, kiln and its
	// agent service; docs/deploy.md). Empty: no Windows hosts (winhosts.go).
	WindowsAMI string
	// EC2IdentityCertificates is the PEM of AWS's public "RSA" certificate for instance
	// identity signatures in the deployment's region (docs/deploy.md): the API verifies the
	// hosts' identity documents with it. Required with WindowsAMI or LinuxAMI.
	EC2IdentityCertificates string
	// WindowsInstanceType is the hosts' instance type. Default DefaultWindowsInstanceType.
	WindowsInstanceType string
	// WindowsWarmPoolSize is how many stopped hosts wait in the warm pool. Default
	// DefaultWindowsWarmPoolSize.
	WindowsWarmPoolSize int
	// WindowsMaxHosts is the most hosts running at once. Default DefaultWindowsMaxHosts.
	WindowsMaxHosts int
	// WindowsEgressPorts are the TCP ports the hosts may connect out to. Default
	// DefaultWindowsEgressPorts.
	WindowsEgressPorts []int
	// LinuxAMI is the AMI of the Linux build hosts (Linux, the engines of LinuxEngineVersions,
	// kiln, a non-root user to run it; docs/deploy.md). Empty: no Linux hosts (linuxhosts.go),
	// and Linux builds run on CodeBuild images.
	LinuxAMI string
	// LinuxEngineVersions are the engine versions the Linux AMI holds: a Linux build of one of
	// them runs on the Linux hosts, not on CodeBuild. Required with LinuxAMI.
	LinuxEngineVersions []string
	// LinuxInstanceType is the Linux hosts' instance type. Default DefaultLinuxInstanceType.
	LinuxInstanceType string
	// LinuxWarmPoolSize is how many stopped Linux hosts wait in the warm pool. Default
	// DefaultLinuxWarmPoolSize.
	LinuxWarmPoolSize int
	// LinuxMaxHosts is the most Linux hosts running at once. Default DefaultLinuxMaxHosts.
	LinuxMaxHosts int
	// LinuxEgressPorts are the TCP ports the Linux hosts may connect out to. Default
	// DefaultLinuxEgressPorts.
	LinuxEgressPorts []int
	// P4File is a Linux arm64 `p4` client shipped to the functions that check Perforce
	// (perforce.go). Empty: none, and Perforce checks answer 503.
	P4File string
}

// Defaults of Props.
const (
	DefaultLambdaAssetRoot       = "bin/lambda"
	DefaultHostRepository        = "kiln-host"
	DefaultArtifactRetentionDays = 30
)

// DefaultHostImages is the one engine version an unconfigured deployment offers.
var DefaultHostImages = map[string]string{"5.4": "5.4"}

// Functions are the Lambdas, one per functions/<name> directory.
var Functions = []string{"api", "task", "ended", "schedule", "deliver", "admin", "live"}

// KilnStack is the stack being built: each createX method adds resources and keeps those the
// later ones refer to.
type KilnStack struct {
	awscdk.Stack
	props Props

	key          awskms.Key
	table        awsdynamodb.Table
	masterKey    awssecretsmanager.Secret
	githubApp    awssecretsmanager.Secret
	bucket       awss3.Bucket
	hostRepo     awsecr.IRepository
	hostProject  awscodebuild.Project
	workflow     awsstepfunctions.StateMachine
	queue        awssqs.Queue
	deliveryDLQ  awssqs.Queue
	eventsDLQ    awssqs.Queue
	httpAPI      awsapigatewayv2.HttpApi
	liveAPI      awsapigatewayv2.WebSocketApi
	distribution awscloudfront.Distribution
	alarmTopic   awssns.Topic
	functions    map[string]*function
	winHosts     *hostGroup // nil: no Windows hosts (winhosts.go)
	linuxHosts   *hostGroup // nil: no Linux hosts (linuxhosts.go)
	hostsSLR     *string    // the host groups' service-linked role (hostsServiceRole)
}

// New defines kiln's stack in scope.
func New(scope constructs.Construct, id string, props Props) awscdk.Stack {
	if props.LambdaAssetRoot == "" {
		props.LambdaAssetRoot = DefaultLambdaAssetRoot
	}
	if props.HostRepository == "" {
		props.HostRepository = DefaultHostRepository
	}
	if len(props.HostImages) == 0 {
		props.HostImages = DefaultHostImages
	}
	if props.Buildspec == "" {
		props.Buildspec = DefaultBuildspec
	}
	if props.ArtifactRetentionDays <= 0 {
		props.ArtifactRetentionDays = DefaultArtifactRetentionDays
	}
	if props.WindowsInstanceType == "" {
		props.WindowsInstanceType = DefaultWindowsInstanceType
	}
	if props.WindowsWarmPoolSize <= 0 {
		props.WindowsWarmPoolSize = DefaultWindowsWarmPoolSize
	}
	if props.WindowsMaxHosts <= 0 {
		props.WindowsMaxHosts = DefaultWindowsMaxHosts
	}
	if len(props.WindowsEgressPorts) == 0 {
		props.WindowsEgressPorts = DefaultWindowsEgressPorts
	}
	props.LinuxInstanceType = cmp.Or(props.LinuxInstanceType, DefaultLinuxInstanceType)
	if props.LinuxWarmPoolSize <= 0 {
		props.LinuxWarmPoolSize = DefaultLinuxWarmPoolSize
	}
	if props.LinuxMaxHosts <= 0 {
		props.LinuxMaxHosts = DefaultLinuxMaxHosts
	}
	if len(props.LinuxEgressPorts) == 0 {
		props.LinuxEgressPorts = DefaultLinuxEgressPorts
	}
	s := &KilnStack{
		Stack:     awscdk.NewStack(scope, jsii.String(id), &props.StackProps),
		props:     props,
		functions: map[string]*function{},
	}
	s.createKey()
	s.createTable()
	s.createSecrets()
	s.createBucket()
	s.createHTTPAPI()
	s.createLiveAPI()
	s.createDistribution()
	s.createQueues()
	s.createHosts()
	s.createWinHosts()
	s.createLinuxHosts()
	s.createWorkflow()
	s.createAPIFunction()
	s.createScheduleFunction()
	s.createDeliverFunction()
	s.createEndedFunction()
	s.createAdminFunction()
	s.createLiveFunction()
	s.addP4Layer()
	s.allowArtifactListings()
	s.addNagSuppressions()
	s.createAlarms()
	s.createOutputs()
	return s.Stack
}

// createOutputs exports what operators and scripts need after a deploy.
func (s *KilnStack) createOutputs() {
	for name, o := range map[string]struct{ desc, value *string }{
		"ApiUrl":                     {jsii.String("base URL of the kiln API"), s.httpAPI.Url()},
		"BaseUrl":                    {jsii.String("one base URL of the API and live build events (CloudFront: " + LivePathPattern + " to the WebSocket API, the rest to the HTTP API)"), s.baseURL()},
		"LiveEndpoint":               {jsii.String("the WebSocket API's @connections endpoint (KILN_LIVE_ENDPOINT)"), s.liveEndpoint()},
		"TableName":                  {jsii.String("DynamoDB table holding kiln's state"), s.table.TableName()},
		"MasterKeySecretArn":         {jsii.String("Secrets Manager secret holding the master key"), s.masterKey.SecretArn()},
		"GitHubAppSecretArn":         {jsii.String("Secrets Manager secret to put the GitHub App's privateKey and webhookSecret in"), s.githubApp.SecretArn()},
		"ArtifactsBucket":            {jsii.String("S3 bucket holding the artifacts"), s.bucket.BucketName()},
		"HostProjectName":            {jsii.String("CodeBuild project of the Linux build hosts"), s.hostProject.ProjectName()},
		"StateMachineArn":            {jsii.String("Step Functions state machine running the builds"), s.workflow.StateMachineArn()},
		"AdminFunctionName":          {jsii.String("Lambda to invoke for the first owner (docs/deploy.md)"), s.functions["admin"].fn.FunctionName()},
		"AlarmTopicArn":              {jsii.String("SNS topic the alarms notify: subscribe to it"), s.alarmTopic.TopicArn()},
		"DeliveryDeadLetterQueueUrl": {jsii.String("deliveries that failed every attempt"), s.deliveryDLQ.QueueUrl()},
		"WindowsHostGroup":           {jsii.String("Auto Scaling group of the Windows build hosts (none without " + ContextWindowsAMI + ")"), s.windowsHostsOutput()},
		"LinuxHostGroup":             {jsii.String("Auto Scaling group of the Linux build hosts (none without " + ContextLinuxAMI + ")"), s.linuxHostsOutput()},
	} {
		awscdk.NewCfnOutput(s.Stack, jsii.String(name), &awscdk.CfnOutputProps{Description: o.desc, Value: o.value})
	}
}
