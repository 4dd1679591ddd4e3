package stack_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
)

var (
	logsWrite   = []string{"logs:CreateLogStream", "logs:PutLogEvents"}
	tableRW     = []string{"dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:UpdateItem"}
	secretRead  = []string{"secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"}
	queueSend   = []string{"sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"}
	queueRecv   = []string{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}
	artifactsRW = []string{"s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:ListMultipartUploadParts", "s3:PutObject"}
)

// hostCredentialParams is the ARN of the test stack's host credential parameters.
var hostCredentialParams = obj{"Fn::Join": []any{"", []any{
	"arn:", ref("AWS::Partition"), ":ssm:", ref("AWS::Region"), ":", ref("AWS::AccountId"), ":parameter/Test/hosts/*",
}}}

// TestFunctionPolicies pins what each function may do, and on what: every action of its role
// and, for each, the only resources it may name.
func TestFunctionPolicies(t *testing.T) {
	table := logicalID(t, "AWS::DynamoDB::Table")
	tableAndIndexes := []any{arnOf(table), obj{"Fn::Join": []any{"", []any{arnOf(table), "/index/*"}}}}
	bucket := logicalID(t, "AWS::S3::Bucket")
	artifacts := obj{"Fn::Join": []any{"", []any{arnOf(bucket), "/artifacts/*"}}}
	machine := logicalID(t, "AWS::StepFunctions::StateMachine")
	executions := obj{"Fn::Join": []any{"", []any{
		"arn:", ref("AWS::Partition"), ":states:", ref("AWS::Region"), ":", ref("AWS::AccountId"), ":execution:",
		obj{"Fn::GetAtt": []any{machine, "Name"}}, ":*",
	}}}
	project := arnOf(logicalID(t, "AWS::CodeBuild::Project"))
	key := arnOf(logicalID(t, "AWS::KMS::Key"))
	queue := arnOf(queueID(t, "DeliveryQueue"))
	master, github := ref(secretID(t, "MasterKey")), ref(secretID(t, "GitHubApp"))

	// on: the resources each action may name.
	type grants map[string][]any
	on := func(g grants, actions []string, resources ...any) {
		for _, a := range actions {
			g[a] = append(g[a], resources...)
		}
	}
	base := func(name string) grants {
		g := grants{}
		on(g, logsWrite, arnOf(idOf(t, "AWS::Logs::LogGroup", functionConstructIDs[name]+"Logs")))
		on(g, tableRW, tableAndIndexes...)
		return g
	}
	want := map[string]grants{}
	for _, name := range []string{"api", "task", "ended", "schedule", "deliver", "admin", "live"} {
		want[name] = base(name)
	}
	// The live sockets: the live function and those posting build events manage the
	// connections of the WebSocket API's stage, never another API's or stage's.
	for _, name := range []string{"api", "task", "ended", "schedule", "live"} {
		on(want[name], []string{"execute-api:ManageConnections"}, connectionsArn(t, "POST"), connectionsArn(t, "GET"), connectionsArn(t, "DELETE"))
	}
	on(want["live"], secretRead, master)
	// The live function greets a socket by invoking itself, and nothing else.
	on(want["live"], []string{"lambda:InvokeFunction"}, arnOf(idOf(t, "AWS::Lambda::Function", functionConstructIDs["live"])))
	on(want["api"], secretRead, master, github)
	// The functions that end builds post their final commit status with the GitHub App; none of
	// them may open sealed secrets (no master key).
	for _, name := range []string{"task", "ended", "schedule"} {
		on(want[name], secretRead, github)
	}
	on(want["api"], []string{"states:StartExecution"}, ref(machine))
	on(want["api"], []string{"states:StopExecution"}, executions)
	on(want["api"], []string{"states:SendTaskHeartbeat", "states:SendTaskSuccess", "states:SendTaskFailure"}, "*")
	on(want["api"], []string{"codebuild:BatchGetBuilds", "codebuild:StopBuild"}, project)
	on(want["api"], artifactsRW, artifacts)
	// Listing the bucket under the artifacts' prefix only: the build caches, and S3's 404 (not
	// 403) for a missing artifact.
	on(want["api"], []string{"s3:ListBucket"}, arnOf(bucket))
	on(want["api"], []string{"kms:Decrypt", "kms:GenerateDataKey"}, key)
	on(want["api"], queueSend, queue)
	// The Windows hosts' claims: is the claiming instance in service in the group?
	on(want["api"], []string{"autoscaling:DescribeAutoScalingInstances"}, "*")
	on(want["schedule"], []string{"s3:DeleteObject"}, artifacts)
	// Its janitor lists the build caches, to remove those of deleted projects (caches/ only).
	on(want["schedule"], []string{"s3:ListBucket"}, arnOf(bucket))
	// The scheduler's tick starts builds (scheduled ones): one execution each.
	on(want["schedule"], []string{"states:StartExecution"}, ref(machine))
	on(want["schedule"], []string{"states:StopExecution"}, executions)
	on(want["schedule"], []string{"codebuild:BatchGetBuilds", "codebuild:StopBuild"}, project)
	on(want["schedule"], queueSend, queue)
	// The Windows hosts (winhosts.go): publish WaitingWin64Builds, end the hosts that are done.
	on(want["schedule"], []string{"cloudwatch:PutMetricData"}, "*")
	on(want["schedule"], []string{"autoscaling:DescribeAutoScalingInstances"}, "*")
	on(want["schedule"], []string{"autoscaling:TerminateInstanceInAutoScalingGroup"}, obj{"Fn::Join": []any{"", []any{
		"arn:", ref("AWS::Partition"), ":autoscaling:", ref("AWS::Region"), ":", ref("AWS::AccountId"),
		":autoScalingGroup:*:autoScalingGroupName/", ref(logicalID(t, "AWS::AutoScaling::AutoScalingGroup")),
	}}})
	on(want["deliver"], secretRead, master)
	on(want["deliver"], []string{"s3:GetObject"}, artifacts)
	// S3's 404 (not 403) for a missing artifact: listing under the artifacts' prefix only.
	on(want["deliver"], []string{"s3:ListBucket"}, arnOf(bucket))
	on(want["deliver"], []string{"kms:Decrypt"}, key)
	on(want["deliver"], queueRecv, queue)
	// A sweep message fans out into one message per due delivery (issue 36, finding 1).
	on(want["deliver"], queueSend, queue)
	on(want["admin"], secretRead, master)
	// The CodeBuild hosts' credentials (Parameter Store): the claim puts one, the build's end
	// deletes it (Finish, or the ended function for an execution stopped or timed out).
	on(want["task"], []string{"ssm:PutParameter", "ssm:DeleteParameter"}, hostCredentialParams)
	on(want["ended"], []string{"ssm:DeleteParameter"}, hostCredentialParams)

	// The prefix each function may list under: the artifacts' where it reads them, the caches'
	// for the schedule's janitor.
	listingPrefix := map[string]string{"api": "artifacts/*", "deliver": "artifacts/*", "schedule": "artifacts/caches/*"}
	for name, g := range want {
		t.Run(name, func(t *testing.T) {
			role := roleOf(t, name)
			var wantActions []string
			for a := range g {
				wantActions = append(wantActions, a)
			}
			sort.Strings(wantActions)
			if got := actionsOf(t, role); !slices.Equal(got, wantActions) {
				t.Errorf("actions\n got %v\nwant %v", got, wantActions)
			}
			for _, s := range roleStatements(t, role) {
				for _, a := range s.actions {
					for _, r := range s.resources {
						if !slices.ContainsFunc(g[a], func(w any) bool { return equalJSON(w, r) }) {
							t.Errorf("%s on %s: not one of its resources", a, jsonString(r))
						}
					}
					// Listing only the artifacts' keys (the schedule: the build caches').
					if a == "s3:ListBucket" && !equalJSON(s.condition, obj{"StringLike": obj{"s3:prefix": listingPrefix[name]}}) {
						t.Errorf("%s without the s3:prefix condition %s: %s", a, listingPrefix[name], jsonString(s.condition))
					}
					// Metrics only in kiln's namespace.
					if a == "cloudwatch:PutMetricData" && !equalJSON(s.condition, obj{"StringEquals": obj{"cloudwatch:namespace": "kiln"}}) {
						t.Errorf("%s without the kiln namespace condition: %s", a, jsonString(s.condition))
					}
					// The key only through S3: reading and writing the artifacts.
					if strings.HasPrefix(a, "kms:") && !strings.Contains(jsonString(s.condition), `"kms:ViaService":{"Fn::Join":["",["s3.",`) {
						t.Errorf("%s without the S3 kms:ViaService condition: %s", a, jsonString(s.condition))
					}
				}
			}
		})
	}
}

// TestSecretsKeyPolicy: the roles reading a secret may decrypt with the key through Secrets
// Manager only, and they are those of the functions reading a secret (the master key or the
// GitHub App's; never the hosts).
func TestSecretsKeyPolicy(t *testing.T) {
	key := props(t, "AWS::KMS::Key")
	var principals []string
	for _, s := range asList(key["KeyPolicy"].(obj)["Statement"]) {
		s := s.(obj)
		if !equalJSON(s["Action"], "kms:Decrypt") {
			continue
		}
		if !strings.Contains(jsonString(s["Condition"]), `"kms:ViaService":{"Fn::Join":["",["secretsmanager.",`) {
			t.Errorf("kms:Decrypt without the Secrets Manager condition: %s", jsonString(s))
		}
		for _, p := range asList(s["Principal"].(obj)["AWS"]) {
			principals = append(principals, jsonString(p))
		}
	}
	var want []string
	for _, name := range []string{"api", "task", "ended", "schedule", "deliver", "admin", "live"} {
		want = append(want, jsonString(arnOf(roleOf(t, name))))
	}
	sort.Strings(principals)
	sort.Strings(want)
	if !slices.Equal(principals, want) {
		t.Errorf("kms:Decrypt for secrets granted to\n%v\nwant\n%v", principals, want)
	}
}

// wildcardAllowlist is every action allowed by a statement with a "*" in an action or a
// resource of "*", by resource type, and why AWS offers nothing finer. (Statements are merged
// by @aws-cdk/aws-iam:minimizePolicies, hence one entry per action.)
var wildcardAllowlist = map[string][]string{
	"AWS::IAM::Policy": {
		// ECR's registry login: GetAuthorizationToken has no resource-level permissions (the
		// hosts pull their image).
		"ecr:GetAuthorizationToken",
		// Step Functions logging to CloudWatch Logs uses the vended-logs delivery APIs, which
		// support no resource-level permissions (AWS documents Resource "*" for them).
		"logs:CreateLogDelivery", "logs:DeleteLogDelivery", "logs:DescribeLogGroups", "logs:DescribeResourcePolicies",
		"logs:GetLogDelivery", "logs:ListLogDeliveries", "logs:PutResourcePolicy", "logs:UpdateLogDelivery",
		// The API passing the hosts' heartbeats on, and answering an agent's build's task token:
		// SendTaskHeartbeat, SendTaskSuccess and SendTaskFailure act on the task their token
		// names and have no resource type in IAM (the Service Authorization Reference lists none
		// for them), so a statement can only name "*".
		"states:SendTaskHeartbeat", "states:SendTaskSuccess", "states:SendTaskFailure",
		// The schedule function publishing kiln/WaitingWin64Builds, which the Windows hosts scale
		// on: PutMetricData has no resource type in IAM; its cloudwatch:namespace condition
		// limits it to kiln's namespace (TestFunctionPolicies pins the condition).
		"cloudwatch:PutMetricData",
		// The API checking that a claiming Windows host is in service in the hosts' group, and
		// the schedule listing the group's hosts to end those that are done:
		// DescribeAutoScalingInstances has no resource type in IAM (AWS documents "*"); it only
		// reads.
		"autoscaling:DescribeAutoScalingInstances",
		// X-Ray tracing of the state machine (kiln:tracing): no resource-level permissions.
		"xray:GetSamplingRules", "xray:GetSamplingTargets", "xray:PutTelemetryRecords", "xray:PutTraceSegments",
	},
	// In a key policy, Resource "*" is the key itself: there is no other form.
	"AWS::KMS::Key": {
		// The account root holding kms:* is AWS's default key policy: it lets IAM policies (those
		// above) grant the key.
		"kms:*",
		// Secrets Manager encrypting the secrets with the key (CDK's Secret with an encryption
		// key), for the account's principals only through Secrets Manager (kms:ViaService); the
		// actions ending in * are the GenerateDataKey and ReEncrypt families. Decrypt is also
		// the functions reading a secret (TestSecretsKeyPolicy pins them and the condition).
		// The same actions, but kms:CreateGrant only for AWS resources, are the Windows hosts'
		// Auto Scaling service-linked role encrypting their volumes (AWS's documented key policy
		// for a group launching volumes with a customer managed key); only Auto Scaling can
		// assume that role (TestWindowsHostVolumeKey pins the statements).
		"kms:CreateGrant", "kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:GenerateDataKey*", "kms:ReEncrypt*",
	},
}

// TestNoWildcards walks every policy of the template (identity policies, key, bucket and queue
// policies): an Allow statement with a "*" action or a "*" resource must be in the allowlist, and
// every allowlist entry is still needed.
func TestNoWildcards(t *testing.T) {
	used := map[string]bool{}
	walkWildcards(t, template, used)
	walkWildcards(t, other, used)
	for typ, actions := range wildcardAllowlist {
		for _, a := range actions {
			if !used[typ+" "+a] {
				t.Errorf("allowlist entry no longer needed: %s %s", typ, a)
			}
		}
	}
}

// walkWildcards checks the wildcard statements of a template against the allowlist, noting the
// entries used.
func walkWildcards(t *testing.T, tmpl assertions.Template, used map[string]bool) {
	t.Helper()
	all := *tmpl.ToJSON()
	for id, r := range all["Resources"].(map[string]any) {
		r := r.(obj)
		typ := r["Type"].(string)
		p, _ := r["Properties"].(obj)
		var docs []any
		for _, field := range []string{"PolicyDocument", "KeyPolicy"} {
			if d, ok := p[field]; ok {
				docs = append(docs, d)
			}
		}
		for _, pol := range asList(p["Policies"]) {
			docs = append(docs, pol.(obj)["PolicyDocument"])
		}
		for _, d := range docs {
			for _, s := range asList(d.(obj)["Statement"]) {
				s := s.(obj)
				if s["Effect"] != "Allow" {
					continue // a Deny may be as wide as it likes (the TLS-only policies)
				}
				var actions []string
				wild := false
				for _, a := range asList(s["Action"]) {
					actions = append(actions, a.(string))
					wild = wild || strings.Contains(a.(string), "*")
				}
				for _, res := range asList(s["Resource"]) {
					wild = wild || res == "*"
				}
				if !wild {
					continue
				}
				for _, a := range actions {
					k := typ + " " + a
					if !slices.Contains(wildcardAllowlist[typ], a) {
						t.Errorf("%s: %s in a wildcard statement, not in the allowlist: %s", id, a, jsonString(s))
					}
					used[k] = true
				}
			}
		}
	}
}

func jsonString(v any) string {
	b := fmt.Sprint(v)
	if j, err := jsonMarshal(v); err == nil {
		b = j
	}
	return b
}
