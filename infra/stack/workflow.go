package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/jsii-runtime-go"

	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// EndedStatuses are the execution statuses the ended function is told of: the execution ended
// without its Finish task (a SUCCEEDED execution has already ended its build).
var EndedStatuses = []string{"FAILED", "TIMED_OUT", "ABORTED"}

// createWorkflow defines the task function and the state machine of sfn.Definition(), one
// Standard execution per build. It logs every event (ALL, what operators need to follow an
// execution) without execution data (the claim's answer names the host's credential parameter,
// never the credential, but a build's data is the tenant's business).
func (s *KilnStack) createWorkflow() {
	task := s.newFunction(functionSpec{
		name: "task", description: "kiln build workflow tasks (claim, finish, unsupported)", memoryMB: 256,
		// Under the definition's 60-second task timeout.
		timeout:        awscdk.Duration_Seconds(jsii.Number(50)),
		noStateMachine: true,
	})
	s.table.GrantReadWriteData(task.role)
	s.githubApp.GrantRead(task.role, nil) // the final commit status of a build it ends
	// The claim puts a CodeBuild host's credential, Finish and HostEnded delete it.
	s.allowHostCredentials(task.role, "ssm:PutParameter", "ssm:DeleteParameter")

	logs := awslogs.NewLogGroup(s.Stack, jsii.String("BuildWorkflowLogs"), &awslogs.LogGroupProps{
		Retention: awslogs.RetentionDays_ONE_MONTH,
	})
	s.workflow = awsstepfunctions.NewStateMachine(s.Stack, jsii.String("BuildWorkflow"), &awsstepfunctions.StateMachineProps{
		Comment:          jsii.String("kiln: one execution per build, named by the build id"),
		StateMachineType: awsstepfunctions.StateMachineType_STANDARD,
		DefinitionBody:   awsstepfunctions.DefinitionBody_FromString(jsii.String(sfn.Definition())),
		DefinitionSubstitutions: &map[string]*string{
			sfn.PlaceholderTaskFunction: task.fn.FunctionArn(),
			sfn.PlaceholderHostProject:  s.hostProject.ProjectName(),
		},
		Logs: &awsstepfunctions.LogOptions{
			Destination:          logs,
			Level:                awsstepfunctions.LogLevel_ALL,
			IncludeExecutionData: jsii.Bool(false),
		},
		TracingEnabled: jsii.Bool(s.props.Tracing),
	})
	// What each integration of the definition needs, as AWS documents it (integrations.go).
	s.allowIntegrations(s.workflow.Role(), task)
}

// executionsArn is the ARN of every execution of the state machine.
func (s *KilnStack) executionsArn() *string {
	return s.Stack.FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("states"),
		Resource:     jsii.String("execution"),
		ResourceName: awscdk.Fn_Join(jsii.String(""), &[]*string{s.workflow.StateMachineName(), jsii.String(":*")}),
		ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
	})
}

// createEndedFunction defines the ended function and the rule invoking it when an execution of
// the state machine failed, timed out or was aborted: it fails the build if still pending or
// running, so that a build never stays running after its execution ended. Events it could not
// take after EventBridge's retries go to the events dead-letter queue.
func (s *KilnStack) createEndedFunction() {
	f := s.newFunction(functionSpec{
		name: "ended", description: "kiln: fails the build of an execution that ended without finishing it", memoryMB: 256,
		timeout: awscdk.Duration_Seconds(jsii.Number(60)),
	})
	s.table.GrantReadWriteData(f.role)
	s.githubApp.GrantRead(f.role, nil) // the final commit status of a build it ends
	// An execution stopped or timed out ran no Finish: its host's credential is deleted here.
	s.allowHostCredentials(f.role, "ssm:DeleteParameter")
	awsevents.NewRule(s.Stack, jsii.String("ExecutionEndedRule"), &awsevents.RuleProps{
		Description: jsii.String("kiln: a build's execution ended without finishing the build"),
		EventPattern: &awsevents.EventPattern{
			Source:     jsii.Strings("aws.states"),
			DetailType: jsii.Strings("Step Functions Execution Status Change"),
			Detail: &map[string]any{
				"status":          EndedStatuses,
				"stateMachineArn": []any{s.workflow.StateMachineArn()},
			},
		},
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(f.fn, &awseventstargets.LambdaFunctionProps{
			DeadLetterQueue: s.eventsDLQ,
			RetryAttempts:   jsii.Number(10),
			MaxEventAge:     awscdk.Duration_Hours(jsii.Number(6)),
		})},
	})
}
