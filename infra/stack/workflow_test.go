package stack_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/kilnbuild/kiln/infra/stack"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

func TestStateMachine(t *testing.T) {
	task := functionLogicalID(t, "task")
	project := logicalID(t, "AWS::CodeBuild::Project")
	logs := idOf(t, "AWS::Logs::LogGroup", "BuildWorkflowLogs")
	sm := props(t, "AWS::StepFunctions::StateMachine")
	// The definition is sfn.Definition() as it is: CloudFormation fills its placeholders.
	if sm["DefinitionString"] != sfn.Definition() {
		t.Errorf("DefinitionString is not sfn.Definition():\n%v", sm["DefinitionString"])
	}
	for name, want := range map[string]any{
		"StateMachineType": "STANDARD",
		"DefinitionSubstitutions": obj{
			sfn.PlaceholderTaskFunction: arnOf(task),
			sfn.PlaceholderHostProject:  ref(project),
		},
		// Every event, and never the execution data: the claim's output holds the host's credential.
		"LoggingConfiguration": obj{
			"Destinations":         []any{obj{"CloudWatchLogsLogGroup": obj{"LogGroupArn": arnOf(logs)}}},
			"IncludeExecutionData": false,
			"Level":                "ALL",
		},
		"TracingConfiguration": obj{"Enabled": false},
	} {
		if !equalJSON(sm[name], want) {
			t.Errorf("%s = %s, want %s", name, jsonString(sm[name]), jsonString(want))
		}
	}
	if lg := resources(t, "AWS::Logs::LogGroup")[logs]["Properties"].(obj); lg["RetentionInDays"] != 30.0 {
		t.Errorf("log retention %v, want 30 days", lg["RetentionInDays"])
	}
}

// TestStateMachineRole: the state machine's role is the integrations table
// (stack.StateMachineIntegrations) on kiln's resources, plus logging, and nothing else; the
// CodeBuild rule is the one AWS names.
func TestStateMachineRole(t *testing.T) {
	sm := props(t, "AWS::StepFunctions::StateMachine")
	role := sm["RoleArn"].(obj)["Fn::GetAtt"].([]any)[0].(string)
	// AWS's "IAM policies for AWS CodeBuild" page (Step Functions developer guide) and the CDK's
	// CodeBuildStartBuild task name the managed rule of startBuild.sync so.
	const awsRule = "StepFunctionsGetEventForCodeBuildStartBuildRule"
	targets := map[string]any{
		stack.OnTaskFunction: arnOf(functionLogicalID(t, "task")),
		stack.OnHostProject:  arnOf(logicalID(t, "AWS::CodeBuild::Project")),
		stack.OnCodeBuildRule: obj{"Fn::Join": []any{"", []any{
			"arn:", ref("AWS::Partition"), ":events:", ref("AWS::Region"), ":", ref("AWS::AccountId"), ":rule/" + awsRule,
		}}},
	}
	want := map[string]any{
		// Logging (Resource "*", TestNoWildcards' allowlist).
		"logs:CreateLogDelivery": "*", "logs:DeleteLogDelivery": "*", "logs:DescribeLogGroups": "*",
		"logs:DescribeResourcePolicies": "*", "logs:GetLogDelivery": "*", "logs:ListLogDeliveries": "*",
		"logs:PutResourcePolicy": "*", "logs:UpdateLogDelivery": "*",
	}
	for _, in := range stack.StateMachineIntegrations {
		for _, g := range in.Grants {
			target, ok := targets[g.On]
			if !ok {
				t.Fatalf("%s: unknown target %q", in.Resource, g.On)
			}
			for _, a := range g.Actions {
				if w, seen := want[a]; seen && !equalJSON(w, target) {
					t.Fatalf("%s granted on two targets", a)
				}
				want[a] = target
			}
		}
	}
	var wantActions []string
	for a := range want {
		wantActions = append(wantActions, a)
	}
	slices.Sort(wantActions)
	if got := actionsOf(t, role); !slices.Equal(got, wantActions) {
		t.Errorf("actions\n got %v\nwant %v", got, wantActions)
	}
	for _, s := range roleStatements(t, role) {
		for _, a := range s.actions {
			if len(s.resources) != 1 || !equalJSON(s.resources[0], want[a]) {
				t.Errorf("%s on %s, want %s", a, jsonString(s.resources), jsonString(want[a]))
			}
		}
	}
}

// TestIntegrationsCoverDefinition: every Task Resource of the definition has its entry in the
// integrations table, with the AWS page it follows, and every entry is used.
func TestIntegrationsCoverDefinition(t *testing.T) {
	var def struct {
		States map[string]struct{ Type, Resource string }
	}
	if err := json.Unmarshal([]byte(sfn.Definition()), &def); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for name, st := range def.States {
		if st.Type != "Task" {
			continue
		}
		used[st.Resource] = true
		i := slices.IndexFunc(stack.StateMachineIntegrations, func(in stack.Integration) bool { return in.Resource == st.Resource })
		if i < 0 {
			t.Errorf("state %s: %s has no entry in stack.StateMachineIntegrations", name, st.Resource)
			continue
		}
		if in := stack.StateMachineIntegrations[i]; !strings.Contains(in.Doc, "https://docs.aws.amazon.com/step-functions/") || len(in.Grants) == 0 {
			t.Errorf("%s: entry %+v cites no Step Functions policy page or grants nothing", st.Resource, in)
		}
	}
	for _, in := range stack.StateMachineIntegrations {
		if !used[in.Resource] {
			t.Errorf("table entry %s: the definition does not use it", in.Resource)
		}
	}
}

func TestExecutionEndedRule(t *testing.T) {
	machine := logicalID(t, "AWS::StepFunctions::StateMachine")
	ended := functionLogicalID(t, "ended")
	rule := resources(t, "AWS::Events::Rule")[idOf(t, "AWS::Events::Rule", "ExecutionEndedRule")]["Properties"].(obj)
	wantPattern := obj{
		"source":      []any{"aws.states"},
		"detail-type": []any{"Step Functions Execution Status Change"},
		"detail": obj{
			"status":          []any{"FAILED", "TIMED_OUT", "ABORTED"},
			"stateMachineArn": []any{ref(machine)},
		},
	}
	if !equalJSON(rule["EventPattern"], wantPattern) {
		t.Errorf("EventPattern %s\nwant %s", jsonString(rule["EventPattern"]), jsonString(wantPattern))
	}
	targets := asList(rule["Targets"])
	if len(targets) != 1 {
		t.Fatalf("targets %s, want the ended function", jsonString(targets))
	}
	target := targets[0].(obj)
	if !equalJSON(target["Arn"], arnOf(ended)) {
		t.Errorf("target %s, want the ended function", jsonString(target["Arn"]))
	}
	if !equalJSON(target["DeadLetterConfig"], obj{"Arn": arnOf(queueID(t, "EventsDeadLetterQueue"))}) {
		t.Errorf("dead-letter queue %s, want the events one", jsonString(target["DeadLetterConfig"]))
	}
	check(t, func() {
		template.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), obj{
			"FunctionName": arnOf(ended),
			"Principal":    "events.amazonaws.com",
			"SourceArn":    arnOf(idOf(t, "AWS::Events::Rule", "ExecutionEndedRule")),
		})
	})
}

func TestScheduleRule(t *testing.T) {
	schedule := functionLogicalID(t, "schedule")
	targets := []any{assertions.Match_ObjectLike(&obj{
		"Arn":              arnOf(schedule),
		"RetryPolicy":      obj{"MaximumRetryAttempts": 0},
		"DeadLetterConfig": obj{"Arn": arnOf(queueID(t, "EventsDeadLetterQueue"))},
	})}
	check(t, func() {
		template.HasResourceProperties(jsii.String("AWS::Events::Rule"), obj{
			"ScheduleExpression": "rate(1 minute)",
			"State":              "ENABLED",
			"Targets":            assertions.Match_ArrayWith(&targets),
		})
	})
}
