package settings

// kiln aws-local's own settings (it reads kiln serve's too, through app.LoadConfig), and the
// places it finds the stand-ins it runs (also read by the tests that start them).
var (
	// LambdaAddr's default is awslocalapp.DefaultLambdaAddr (cmd/kiln's test checks it).
	LambdaAddr       = Row{"KILN_LAMBDA_ADDR", "127.0.0.1:3001", "where kiln aws-local answers the Lambda Invoke API", KindText, AWSLocal}
	AWSLocalTemplate = Row{"KILN_AWSLOCAL_TEMPLATE", "", "the synthesized template whose IAM policies kiln aws-local enforces (default cdk.out/Kiln.template.json of the repository)", KindPath, AWSLocal}
	DynamoDBLocalDir = Row{"KILN_DYNAMODB_LOCAL_DIR", "", "the directory holding DynamoDBLocal.jar (default the repository's .cache copy, installed on first use)", KindPath, AWSLocal | Test}
	MinIO            = Row{"KILN_MINIO", "", "the MinIO binary (default the repository's .cache/minio/bin/minio)", KindPath, AWSLocal | Test}
)

var awsLocalRows = []Row{LambdaAddr, AWSLocalTemplate, DynamoDBLocalDir, MinIO}

// What kiln sets for the processes it starts itself: read by them, never by an operator's hand.
var (
	AWSLocalLifeline = Row{"KILN_AWS_LOCAL_LIFELINE", "", "marks the processes of one kiln aws-local lifeline (lifeline.MarkerVar), which its watchdog ends", KindText, Child}
	NetNS            = Row{"KILN_NETNS", "", "1 in a test binary re-run inside its private network namespace (dynamolocal)", KindFlag, Child | Test}
	// The environment of the Step Functions stand-in's script (scripts/aws-local), set by
	// shared/awslocal/stepfunctions.
	SFNModule            = Row{"KILN_SFN_MODULE", "", "the aws-local-stepfunctions module the script loads", KindPath, Child}
	SFNDefinition        = Row{"KILN_SFN_DEFINITION", "", "the state machine's definition (a file)", KindPath, Child}
	SFNStateMachineARN   = Row{"KILN_SFN_STATE_MACHINE_ARN", "", "the state machine's ARN", KindText, Child}
	SFNLambdaEndpoint    = Row{"KILN_SFN_LAMBDA_ENDPOINT", "", "the Lambda Invoke API the state machine calls", KindText, Child}
	SFNCodeBuildEndpoint = Row{"KILN_SFN_CODEBUILD_ENDPOINT", "", "the CodeBuild stand-in the state machine calls", KindText, Child}
	SFNEndedFunction     = Row{"KILN_SFN_ENDED_FUNCTION", "", "the function told of an execution that failed", KindText, Child}
	SFNAccessKeyID       = Row{"KILN_SFN_ACCESS_KEY_ID", "", "the state machine's access key id", KindText, Child}
	SFNEventsAccessKeyID = Row{"KILN_SFN_EVENTS_ACCESS_KEY_ID", "", "EventBridge's access key id", KindText, Child}
	SFNPollMS            = Row{"KILN_SFN_POLL_MS", "", "how often the script polls CodeBuild, in milliseconds", KindText, Child}
	SFNHeartbeatMS       = Row{"KILN_SFN_HEARTBEAT_MS", "", "the task heartbeat timeout, in milliseconds", KindText, Child}
	SFNMaxHistory        = Row{"KILN_SFN_MAX_HISTORY", "", "an execution's history quota, in events (Step Functions': 25000)", KindText, Child}
)

var childRows = []Row{
	AWSLocalLifeline, NetNS, SFNModule, SFNDefinition, SFNStateMachineARN, SFNLambdaEndpoint, SFNCodeBuildEndpoint,
	SFNEndedFunction, SFNAccessKeyID, SFNEventsAccessKeyID, SFNPollMS, SFNHeartbeatMS, SFNMaxHistory,
}
