package stack

import (
	"fmt"
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// nagSuppressions are the cdk-nag AwsSolutions findings kiln keeps stack-wide, each with why
// (TestCDKNag runs the rules on the stack and fails on any error not suppressed). AwsSolutions-IAM5
// (wildcards in a policy) is not among them: addWildcardSuppressions names each wildcard on the
// role whose policy has it.
var nagSuppressions = map[string]string{
	"AwsSolutions-IAM4":  "AmazonSSMManagedInstanceCore on the Windows and Linux host roles: AWS's policy for Session Manager, the operators' only access (docs/deploy.md section 8); Parameter Store reads it allows are denied",
	"AwsSolutions-APIG4": "kiln authenticates every request in the API function (API tokens, host credentials, webhook signatures, instance identities), and every socket in the live function (the token comes in Socket.IO's CONNECT packet, after $connect): an API Gateway authorizer would see none of them",
	"AwsSolutions-SMG4":  "the master key cannot rotate without making the sealed values in the table unreadable (kiln's own key rotation is the operator's), and the GitHub App's private key and webhook secret are rotated in GitHub, then stored here by the operator (docs/deploy.md section 2)",
	"AwsSolutions-SF2":   "X-Ray tracing of the state machine is the operator's choice (kiln:tracing): off by default for its cost",
	"AwsSolutions-SQS3":  "the dead-letter queues are dead-letter queues: nothing redrives from them but the operator",
	"AwsSolutions-S1":    "the artifacts bucket is written and read through presigned URLs the API signs and records; server access logs would need a second bucket and log nothing kiln does not already record (use CloudTrail data events for an audit)",
	"AwsSolutions-CB4":   "the host project produces no CodeBuild artifacts or caches: its build writes only its logs; a customer managed key would have to be granted to the hosts' role, which reaches no key by design (TestHostRoleReachesNothing)",
	"AwsSolutions-VPC7":  "the Windows and Linux hosts' VPCs accept no inbound connection (no inbound rule) and their hosts reach only the egress ports of kiln:windowsEgressPorts, kiln:linuxEgressPorts; flow logs would cost per GB for nothing to investigate",
	"AwsSolutions-AS3":   "the Windows and Linux hosts' groups scale on kiln's own metrics and the schedule ends their hosts; the alarms of section 6 watch kiln, not the group's activity",
}

// addNagSuppressions records nagSuppressions on the stack, and the wildcards of each role on
// that role (addWildcardSuppressions).
func (s *KilnStack) addNagSuppressions() {
	ids := make([]string, 0, len(nagSuppressions))
	for id := range nagSuppressions {
		ids = append(ids, id)
	}
	sort.Strings(ids) // the same metadata at every synth
	var list []*cdknag.NagPackSuppression
	for _, id := range ids {
		list = append(list, &cdknag.NagPackSuppression{Id: jsii.String(id), Reason: jsii.String(nagSuppressions[id])})
	}
	cdknag.NagSuppressions_AddStackSuppressions(s.Stack, &list, nil)
	s.addWildcardSuppressions()
}

// wildcard is one finding of AwsSolutions-IAM5 on a role's policy: the wildcard as cdk-nag
// spells it ("Resource::<Table1A2B3C4D.Arn>/index/*", intrinsics in angle brackets) and why
// AWS offers nothing narrower.
type wildcard struct{ appliesTo, reason string }

// addWildcardSuppressions suppresses AwsSolutions-IAM5 on each role for exactly the wildcard
// resources its policies name, each with its reason; any other wildcard fails TestCDKNag.
// Resource "*" is only for actions IAM gives no resource type (policy_test.go's
// wildcardAllowlist lists each, TestNoWildcards).
func (s *KilnStack) addWildcardSuppressions() {
	table := wildcard{"Resource::<" + s.logicalID(s.table) + ".Arn>/index/*",
		"the table's global secondary indexes (GSI1-GSI4, docs/dynamodb.md): the table's grant names them all"}
	artifacts := wildcard{"Resource::<" + s.logicalID(s.bucket) + ".Arn>/" + ArtifactsPrefix + "/*",
		"the artifacts and build caches, one object per build under the bucket's artifacts prefix: their keys exist once a build runs"}
	executions := wildcard{"Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<" + s.logicalID(s.workflow) + ".Name>:*",
		"the state machine's executions, one per build, named after the build: they exist once a build starts"}
	var connections []wildcard
	for _, method := range []string{"POST", "GET", "DELETE"} {
		connections = append(connections, wildcard{
			"Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<" + s.logicalID(s.liveAPI) + ">/" + LiveStage + "/" + method + "/@connections/*",
			"the live stage's connections (" + method + "): a connection's id exists only once a client connects"})
	}
	hostParams := wildcard{"Resource::arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/" + *s.Stack.StackName() + "/hosts/*",
		"the hosts' credential parameters (" + s.hostCredentialPath() + "/<build id>/...), one per build: they exist once a build is claimed"}
	var groups []wildcard // the groups' ARNs, for the schedule
	for _, g := range s.hostGroups() {
		groups = append(groups, wildcard{
			"Resource::arn:<AWS::Partition>:autoscaling:<AWS::Region>:<AWS::AccountId>:autoScalingGroup:*:autoScalingGroupName/<" + s.logicalID(g.group) + ">",
			"one host group: an Auto Scaling group's ARN holds the group's id (autoScalingGroup:<id>:autoScalingGroupName/<name>), which CloudFormation does not return"})
	}
	noResourceType := func(actions string) wildcard {
		return wildcard{"Resource::*", actions + ": IAM gives these actions no resource type, so a statement can only name \"*\""}
	}

	byFunction := map[string][]wildcard{
		"api": append([]wildcard{table, artifacts, executions,
			noResourceType("states:SendTaskHeartbeat, states:SendTaskSuccess, states:SendTaskFailure (the task token names the task)" + s.ifHostGroups(", autoscaling:DescribeAutoScalingInstances"))},
			connections...),
		"task":     append([]wildcard{table, hostParams}, connections...),
		"ended":    append([]wildcard{table, hostParams}, connections...),
		"schedule": append(append([]wildcard{table, artifacts, executions}, connections...), groups...),
		"deliver":  {table, artifacts},
		"admin":    {table},
		"live":     append([]wildcard{table}, connections...),
	}
	if len(groups) > 0 {
		byFunction["schedule"] = append(byFunction["schedule"],
			noResourceType("cloudwatch:PutMetricData (limited to kiln's namespace by its cloudwatch:namespace condition), autoscaling:DescribeAutoScalingInstances"))
	}
	for name, list := range byFunction {
		if f := s.functions[name]; f != nil {
			suppressWildcards(f.role, list)
		}
	}
	project := s.logicalID(s.hostProject)
	suppressWildcards(s.hostProject.Role(), []wildcard{hostParams,
		noResourceType("ecr:GetAuthorizationToken (the registry login before pulling the host image)"),
		{"Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/codebuild/<" + project + ">:*",
			"the host project's own log streams (CDK's CodeBuild grant): one per build"},
		{"Resource::arn:<AWS::Partition>:codebuild:<AWS::Region>:<AWS::AccountId>:report-group/<" + project + ">-*",
			"the host project's own report groups (CDK's CodeBuild grant): named after the project"},
	})
	suppressWildcards(s.workflow.Role(), []wildcard{noResourceType("the CloudWatch Logs vended-log delivery actions of the state machine's logging (logs:CreateLogDelivery, logs:GetLogDelivery, logs:UpdateLogDelivery, logs:DeleteLogDelivery, logs:ListLogDeliveries, logs:PutResourcePolicy, logs:DescribeResourcePolicies, logs:DescribeLogGroups)" +
		" and, with kiln:tracing, X-Ray's (xray:PutTraceSegments, xray:PutTelemetryRecords, xray:GetSamplingRules, xray:GetSamplingTargets)")})
	for _, g := range s.hostGroups() {
		suppressWildcards(g.role, []wildcard{{
			"Resource::arn:<AWS::Partition>:autoscaling:<AWS::Region>:<AWS::AccountId>:autoScalingGroup:*:autoScalingGroupName/<AWS::StackName>" + g.suffix,
			"its own group, by name, to complete its launch lifecycle action: the ARN holds the group's id, which the launch template cannot refer to"}})
	}
}

// suppressWildcards records AwsSolutions-IAM5 suppressions on a role and its policies, one per
// wildcard, named by appliesTo.
func suppressWildcards(role constructs.IConstruct, list []wildcard) {
	var out []*cdknag.NagPackSuppression
	for _, w := range list {
		out = append(out, &cdknag.NagPackSuppression{Id: jsii.String("AwsSolutions-IAM5"), Reason: jsii.String(w.reason),
			AppliesTo: &[]any{w.appliesTo}})
	}
	cdknag.NagSuppressions_AddResourceSuppressions(role, &out, jsii.Bool(true))
}

// logicalID is the logical id of a construct's CloudFormation resource (its default child).
func (s *KilnStack) logicalID(c constructs.IConstruct) string {
	cfn, ok := c.Node().DefaultChild().(awscdk.CfnElement)
	if !ok {
		panic(fmt.Sprintf("%s has no CloudFormation resource", *c.Node().Path()))
	}
	return fmt.Sprint(s.Stack.Resolve(s.Stack.GetLogicalId(cfn)))
}

// ifHostGroups is text, when the stack has host groups.
func (s *KilnStack) ifHostGroups(text string) string {
	if len(s.hostGroups()) == 0 {
		return ""
	}
	return text
}
