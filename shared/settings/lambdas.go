package settings

// The AWS functions' own settings (awsapp.LoadAWSConfig and LoadBackgroundConfig; admin reads
// its table only). The CDK stack (infra/stack) sets them; its test checks that every variable it
// gives a function is a row a function reads.
var (
	DynamoDBTable      = Row{"KILN_DYNAMODB_TABLE", "", "the DynamoDB table (required)", KindOwn, Functions}
	MasterKeySecretARN = Row{"KILN_MASTER_KEY_SECRET_ARN", "", "the Secrets Manager secret holding the master key (required)", KindOwn, Lambdas}
	EngineVersions     = Row{"KILN_ENGINE_VERSIONS", "", "the engine versions the build hosts provide, e.g. 5.3,5.4", KindOwn, Lambdas}
	DeliveryQueueURL   = Row{"KILN_DELIVERY_QUEUE_URL", "", "the SQS queue of delivery attempts (required by schedule and deliver)", KindOwn, Lambdas}
	GitHubAppSlug      = Row{"KILN_GITHUB_APP_SLUG", "", "the GitHub App's slug", KindOwn, Lambdas}
	GitHubSecretARN    = Row{"KILN_GITHUB_SECRET_ARN", "", "the Secrets Manager secret holding the GitHub App's {\"privateKey\",\"webhookSecret\"} and, for KILN_SIGNUP=github, \"clientSecret\"", KindOwn, Lambdas}
	StateMachineARN    = Row{"KILN_STATE_MACHINE_ARN", "", "the builds' state machine; unset: builds do not run", KindOwn, Lambdas}
	HostProject        = Row{"KILN_HOST_PROJECT", "", "the CodeBuild project of the Linux build hosts", KindOwn, Lambdas}
	HostImages         = Row{"KILN_HOST_IMAGES", "", "JSON object of engine version to build host image", KindOwn, Lambdas}
	HostCredentialPath = Row{"KILN_HOST_CREDENTIAL_PATH", "", "the Parameter Store path of the CodeBuild hosts' credentials", KindOwn, Lambdas}
	WindowsHostGroup   = Row{"KILN_WINDOWS_HOST_GROUP", "", "the hosted Windows hosts' Auto Scaling group; unset: none", KindOwn, Lambdas}
	AWSAccountID       = Row{"KILN_AWS_ACCOUNT_ID", "", "the deployment's AWS account (12 digits)", KindOwn, Lambdas}
	EC2IdentityCerts   = Row{"KILN_EC2_IDENTITY_CERTS", "", "PEM certificates of the region's EC2 instance identity documents", KindOwn, Lambdas}
	WindowsHostIdle    = Row{"KILN_WINDOWS_HOST_IDLE", "15m", "how long a hosted Windows host may stay in service without a build while none waits (a minute or more)", KindOwn, Lambdas}
	LinuxHostGroup     = Row{"KILN_LINUX_HOST_GROUP", "", "the hosted Linux hosts' Auto Scaling group; unset: Linux builds run on CodeBuild images", KindOwn, Lambdas}
	LinuxHostEngines   = Row{"KILN_LINUX_HOST_ENGINES", "", "the engine versions the hosted Linux hosts' AMI holds, e.g. 5.4 (required with KILN_LINUX_HOST_GROUP)", KindOwn, Lambdas}
	LinuxHostIdle      = Row{"KILN_LINUX_HOST_IDLE", "15m", "how long a hosted Linux host may stay in service without a build while none waits (a minute or more)", KindOwn, Lambdas}
	// LiveEndpoint is read with the rest of LoadAWSConfig's settings; the stack sets it for the
	// functions that post build events to WebSocket connections (the live function, and those
	// where log lines and status changes are written).
	LiveEndpoint = Row{"KILN_LIVE_ENDPOINT", "", "the WebSocket API's @connections endpoint, https://<api id>.execute-api.<region>.amazonaws.com/<stage>; unset: no live events", KindPublicURL, Lambdas | Live}
)

var lambdaRows = []Row{
	DynamoDBTable, MasterKeySecretARN, EngineVersions, DeliveryQueueURL, GitHubAppSlug, GitHubSecretARN, StateMachineARN,
	HostProject, HostImages, HostCredentialPath, WindowsHostGroup, AWSAccountID, EC2IdentityCerts, WindowsHostIdle,
	LinuxHostGroup, LinuxHostEngines, LinuxHostIdle, LiveEndpoint,
}
