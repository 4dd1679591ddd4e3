package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// The state machine role's service-integration statements, derived from one table: for each
// Task Resource the definition (sfn.Definition) uses, the policy AWS documents for that
// integration, on kiln's resources. TestStateMachineRole compares the synthesized role with it,
// and TestIntegrationsCoverDefinition checks that every Task Resource of the definition has an
// entry.

// Targets an integration's statement acts on.
const (
	OnTaskFunction  = "the task function"
	OnHostProject   = "the hosts' CodeBuild project"
	OnCodeBuildRule = "the managed EventBridge rule of startBuild.sync"
)

// CodeBuildSyncRule is the EventBridge rule Step Functions creates (once per account and region)
// and uses to learn that a CodeBuild build started with codebuild:startBuild.sync ended; the
// execution role must be allowed to manage it. Its name as AWS's "IAM policies for AWS CodeBuild"
// page gives it (and the CDK's CodeBuildStartBuild task grants).
const CodeBuildSyncRule = "StepFunctionsGetEventForCodeBuildStartBuildRule"

// IntegrationGrant is one statement of an integration's policy.
type IntegrationGrant struct {
	Actions []string
	On      string // one of the On* targets
}

// Integration is the policy AWS documents for one Task Resource of the definition.
type Integration struct {
	// Resource is the Task state's Resource as the definition writes it: an integration ARN, or
	// "${TaskFunctionArn}" for a Lambda task naming its function directly.
	Resource string
	// Doc is the AWS page documenting the policy (title and URL).
	Doc    string
	Grants []IntegrationGrant
}

// lambdaIAMDoc and codeBuildIAMDoc are the Step Functions developer guide's policy pages.
const (
	lambdaIAMDoc    = `"IAM policies for AWS Lambda", https://docs.aws.amazon.com/step-functions/latest/dg/lambda-iam.html`
	codeBuildIAMDoc = `"IAM policies for AWS CodeBuild", https://docs.aws.amazon.com/step-functions/latest/dg/codebuild-iam.html`
)

// StateMachineIntegrations is the table: the integrations sfn.Definition uses, each with AWS's
// documented policy for its static resources (the resource names are fixed in the definition
// or by the deployment's substitutions).
var StateMachineIntegrations = []Integration{
	{
		// Claim, Finish, HostEnded, Unsupported: the task function called directly.
		Resource: "${TaskFunctionArn}", Doc: lambdaIAMDoc,
		Grants: []IntegrationGrant{{Actions: []string{"lambda:InvokeFunction"}, On: OnTaskFunction}},
	},
	{
		// WaitForAgent: the await task, then the task token.
		Resource: "arn:aws:states:::lambda:invoke.waitForTaskToken", Doc: lambdaIAMDoc,
		Grants: []IntegrationGrant{{Actions: []string{"lambda:InvokeFunction"}, On: OnTaskFunction}},
	},
	{
		// RunOnCodeBuild: StartBuild, Run a Job (.sync), static resources.
		Resource: "arn:aws:states:::codebuild:startBuild.sync", Doc: codeBuildIAMDoc,
		Grants: []IntegrationGrant{
			{Actions: []string{"codebuild:StartBuild", "codebuild:StopBuild", "codebuild:BatchGetBuilds"}, On: OnHostProject},
			{Actions: []string{"events:PutTargets", "events:PutRule", "events:DescribeRule"}, On: OnCodeBuildRule},
		},
	},
}

// allowIntegrations grants the state machine's role the table's statements, one per target with
// its actions merged across integrations.
func (s *KilnStack) allowIntegrations(role awsiam.IRole, task *function) {
	targets := map[string]*string{
		OnTaskFunction: task.fn.FunctionArn(),
		OnHostProject:  s.hostProject.ProjectArn(),
		OnCodeBuildRule: s.Stack.FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("events"), Resource: jsii.String("rule"), ResourceName: jsii.String(CodeBuildSyncRule),
		}),
	}
	actions := map[string][]string{}
	var order []string
	for _, in := range StateMachineIntegrations {
		for _, g := range in.Grants {
			if targets[g.On] == nil {
				panic("stack: integration " + in.Resource + " grants on an unknown target " + g.On) // static table
			}
			if _, seen := actions[g.On]; !seen {
				order = append(order, g.On)
			}
			for _, a := range g.Actions {
				if !contains(actions[g.On], a) {
					actions[g.On] = append(actions[g.On], a)
				}
			}
		}
	}
	for _, on := range order {
		role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings(actions[on]...),
			Resources: &[]*string{targets[on]},
		}))
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
