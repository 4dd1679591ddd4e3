package awslocal

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestAWSLocalIAM: kiln aws-local enforces the stack's IAM policies. A template missing a
// statement a flow needs makes that flow fail with AccessDenied naming the principal, the action
// and the resource; the template with the statement lets it pass.
func TestAWSLocalIAM(t *testing.T) {
	t.Parallel()
	t.Run("WrongCodeBuildRuleFailsALinuxBuildAtRunOnCodeBuild", func(t *testing.T) {
		t.Parallel()
		// The rule infra granted: Step Functions' startBuild.sync manages another one.
		w := e2e.NewWorld(t, e2e.AWSLocal, e2e.WithTemplate(e2e.WriteTemplate(t, e2e.WithRuleName("StepFunctionsGetEventsForCodeBuildRule"), e2e.WithScheduleStartExecution())))
		e2e.ExpectRefusals(t, w, "/kiln-builds-execution is not authorized to perform: events:PutTargets")
		pid := w.AddShooter(t)
		sid := w.AddSetting(t, pid, nil)["id"].(string)
		id := w.Trigger(t, pid, sid, "")
		if b := w.WaitEnded(t, id); b["status"] != "failed" {
			t.Fatalf("build ended %v, want failed", b["status"])
		}
		wantRefused(t, w.Logs.String(), "assumed-role/BuildWorkflowRole", "/kiln-builds-execution is not authorized to perform: events:PutTargets on resource: arn:aws:events:us-east-1:000000000000:rule/StepFunctionsGetEventForCodeBuildStartBuildRule")
	})
	t.Run("TaskWithoutDynamoDBFailsTheBuild", func(t *testing.T) {
		t.Parallel()
		edits := []e2e.TemplateEdit{e2e.WithRuleName("StepFunctionsGetEventForCodeBuildStartBuildRule"), e2e.WithScheduleStartExecution()}
		for _, a := range []string{"BatchGetItem", "BatchWriteItem", "ConditionCheckItem", "DeleteItem", "DescribeTable", "GetItem", "GetRecords",
			"GetShardIterator", "PutItem", "Query", "Scan", "UpdateItem"} {
			edits = append(edits, e2e.WithoutAction("task", "dynamodb:"+a))
		}
		w := e2e.NewWorld(t, e2e.AWSLocal, e2e.WithTemplate(e2e.WriteTemplate(t, edits...)))
		e2e.ExpectRefusals(t, w, "/task is not authorized to perform: dynamodb:")
		pid := w.AddShooter(t)
		sid := w.AddSetting(t, pid, nil)["id"].(string)
		id := w.Trigger(t, pid, sid, "")
		if b := w.WaitEnded(t, id); b["status"] != "failed" {
			t.Fatalf("build ended %v, want failed", b["status"])
		}
		wantRefused(t, w.Logs.String(), "assumed-role/TaskFunctionRole", "/task is not authorized to perform: dynamodb:", "on resource: arn:aws:dynamodb:us-east-1:000000000000:table/kiln")
	})
	t.Run("HostRoleWithoutGetParametersFailsTheLinuxBuild", func(t *testing.T) {
		t.Parallel()
		// CodeBuild reads the host's credential parameter with the project's role when the
		// build starts: without ssm:GetParameters the build fails before the host runs.
		w := e2e.NewWorld(t, e2e.AWSLocal, e2e.WithTemplate(e2e.WriteTemplate(t, e2e.WithRuleName("StepFunctionsGetEventForCodeBuildStartBuildRule"), e2e.WithScheduleStartExecution(),
			e2e.WithoutAction("hosts", "ssm:GetParameters"))))
		e2e.ExpectRefusals(t, w, "/AWSCodeBuild-local is not authorized to perform: ssm:GetParameters")
		pid := w.AddShooter(t)
		sid := w.AddSetting(t, pid, nil)["id"].(string)
		id := w.Trigger(t, pid, sid, "")
		if b := w.WaitEnded(t, id); b["status"] != "failed" || b["failureReason"] != "host lost: its CodeBuild build ended FAILED" {
			t.Fatalf("build ended %v (%v), want failed as host lost", b["status"], b["failureReason"])
		}
		wantRefused(t, w.Logs.String(), "assumed-role/HostProjectRole", "/AWSCodeBuild-local is not authorized to perform: ssm:GetParameters on resource: arn:aws:ssm:us-east-1:000000000000:parameter/Kiln/hosts/"+id+"/")
		w.WaitParametersGone(t) // HostEnded deleted it
	})
	for _, granted := range []bool{false, true} {
		name := "ScheduleWithoutStartExecutionStartsNoBuild"
		edits := []e2e.TemplateEdit{e2e.WithRuleName("StepFunctionsGetEventForCodeBuildStartBuildRule"), e2e.WithoutAction("schedule", "states:StartExecution")}
		if granted {
			name = "ScheduleWithStartExecutionRunsTheScheduledBuild"
			edits = []e2e.TemplateEdit{e2e.WithRuleName("StepFunctionsGetEventForCodeBuildStartBuildRule"), e2e.WithScheduleStartExecution()}
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := e2e.NewWorld(t, e2e.AWSLocal, e2e.ToTheNextMinute, e2e.WithTemplate(e2e.WriteTemplate(t, edits...)))
			if !granted {
				e2e.ExpectRefusals(t, w, "/schedule is not authorized to perform: states:StartExecution")
			}
			pid := w.AddShooter(t)
			sid := w.AddSetting(t, pid, map[string]any{"trigger": "scheduled", "schedule": "* * * * *"})["id"].(string)
			deadline := time.Now().Add(90 * time.Second)
			var got []map[string]any
			for time.Now().Before(deadline) && len(got) == 0 {
				got = e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+sid, w.Token, nil))
				time.Sleep(500 * time.Millisecond)
			}
			if len(got) == 0 {
				t.Fatal("the schedule made no build within its first slot")
			}
			id := got[0]["id"].(string)
			if granted {
				if b := w.WaitEnded(t, id); b["status"] != "complete" {
					t.Fatalf("the scheduled build ended %v: %v", b["status"], b["failureReason"])
				}
				return
			}
			time.Sleep(5 * time.Second) // ticks enough to start it, were it allowed
			b := w.Do(t, "GET", "/builds/"+id, w.Token, nil)
			if st := b.Body["status"]; st == "running" || st == "complete" {
				t.Fatalf("the scheduled build is %v although the schedule may not start executions", st)
			}
			wantRefused(t, w.Logs.String(), "assumed-role/ScheduleFunctionRole", "/schedule is not authorized to perform: states:StartExecution on resource: arn:aws:states:us-east-1:000000000000:stateMachine:kiln-builds")
		})
	}
}

// wantRefused asserts aws-local logged a refusal holding every part.
func wantRefused(t *testing.T, logs string, parts ...string) {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, "aws-local IAM: refused") {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return
		}
	}
	t.Fatalf("no refusal with %q in aws-local's log:\n%s", parts, logs)
}
