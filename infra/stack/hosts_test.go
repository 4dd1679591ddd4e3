package stack_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

func TestHostProject(t *testing.T) {
	project := props(t, "AWS::CodeBuild::Project")
	logs := idOf(t, "AWS::Logs::LogGroup", "HostLogs")
	for name, want := range map[string]any{
		// No source: the kiln agent fetches it; the buildspec as given, not re-serialized.
		"Source": obj{"Type": "NO_SOURCE", "BuildSpec": testBuildspec},
		"Environment": obj{
			"Type":        "LINUX_CONTAINER",
			"ComputeType": "BUILD_GENERAL1_LARGE",
			// The first engine version's image; each build overrides it with its own.
			"Image":                    obj{"Fn::Join": []any{"", imageURI("ue-5.3")}},
			"ImagePullCredentialsType": "SERVICE_ROLE",
			"PrivilegedMode":           false,
		},
		"LogsConfig": obj{"CloudWatchLogs": obj{"GroupName": ref(logs), "Status": "ENABLED"}},
		// A host build queued longer ends (the host's start grace counts on it).
		"QueuedTimeoutInMinutes": sfn.HostQueuedTimeoutMinutes,
	} {
		if !equalJSON(project[name], want) {
			t.Errorf("%s = %s\nwant %s", name, jsonString(project[name]), jsonString(want))
		}
	}
	if lg := resources(t, "AWS::Logs::LogGroup")[logs]["Properties"].(obj); lg["RetentionInDays"] != 30.0 {
		t.Errorf("log retention %v, want 30 days", lg["RetentionInDays"])
	}
}

// TestHostRoleReachesNothing: the hosts run a tenant's code. Their role pulls the host images,
// writes their own logs and reports and reads the hosts' credential parameters (CodeBuild does,
// to fill KILN_HOST_CREDENTIAL), and nothing else: no table, bucket, secret, key, queue,
// workflow, function, or other parameter, and no listing of parameters.
func TestHostRoleReachesNothing(t *testing.T) {
	project := props(t, "AWS::CodeBuild::Project")
	role := project["ServiceRole"].(obj)["Fn::GetAtt"].([]any)[0].(string)
	actions := actionsOf(t, role)
	if len(actions) == 0 {
		t.Fatal("the host role has no actions: not its policy")
	}
	if !slices.Contains(actions, "ssm:GetParameters") {
		t.Error("the host role may not read the host credential parameters: CodeBuild cannot fill KILN_HOST_CREDENTIAL")
	}
	for _, a := range actions {
		service := a[:strings.Index(a, ":")]
		if service != "ecr" && service != "logs" && service != "codebuild" && a != "ssm:GetParameters" {
			t.Errorf("host role may %s", a)
		}
		if service == "codebuild" && !strings.Contains(a, "Report") && a != "codebuild:BatchPutTestCases" && a != "codebuild:BatchPutCodeCoverages" {
			t.Errorf("host role may %s", a)
		}
	}
	repo := obj{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":ecr:", ref("AWS::Region"), ":", ref("AWS::AccountId"), ":repository/kiln-test-host"}}}
	for _, s := range roleStatements(t, role) {
		for _, a := range s.actions {
			switch {
			case a == "ecr:GetAuthorizationToken": // Resource "*": TestNoWildcards
			case strings.HasPrefix(a, "ecr:"):
				if len(s.resources) != 1 || !equalJSON(s.resources[0], repo) {
					t.Errorf("%s on %s, want the host repository only", a, jsonString(s.resources))
				}
			case a == "ssm:GetParameters":
				if len(s.resources) != 1 || !equalJSON(s.resources[0], hostCredentialParams) {
					t.Errorf("%s on %s, want the hosts' credential parameters only", a, jsonString(s.resources))
				}
			case strings.HasPrefix(a, "codebuild:"):
				for _, r := range s.resources {
					if !strings.Contains(jsonString(r), ":report-group/") {
						t.Errorf("%s on %s, want its own report groups", a, jsonString(r))
					}
				}
			}
		}
	}
	// No resource policy names it either (the key's, the bucket's, the queues').
	for id, r := range map[string]string{"key": "AWS::KMS::Key", "bucket": "AWS::S3::BucketPolicy", "queues": "AWS::SQS::QueuePolicy"} {
		for _, res := range resources(t, r) {
			if strings.Contains(jsonString(res), `"`+role+`"`) {
				t.Errorf("the %s policy names the host role", id)
			}
		}
	}
}
