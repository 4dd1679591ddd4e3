package stack

import (
	"sort"

	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// nagSuppressions are the cdk-nag AwsSolutions findings kiln keeps, each with why (TestCDKNag
// runs the rules on the stack and fails on any error not listed here).
var nagSuppressions = map[string]string{
	"AwsSolutions-IAM4":  "AmazonSSMManagedInstanceCore on the Windows and Linux host roles: AWS's policy for Session Manager, the operators' only access (docs/deploy.md section 8); Parameter Store reads it allows are denied",
	"AwsSolutions-IAM5":  "every Resource \"*\" is an action IAM gives no resource type (each listed with its reason in policy_test.go's wildcardAllowlist, TestNoWildcards); the other wildcards are prefixes of kiln's own resources: the table's indexes (index/*), the artifacts (artifacts/*), the state machine's executions (execution:<name>:*), the CodeBuild project's own log streams and report groups (CDK's grants), and the live stage's connections (<api>/live/<method>/@connections/*: a connection's id exists only once a client connects)",
	"AwsSolutions-APIG4": "kiln authenticates every request in the API function (API tokens, host credentials, webhook signatures, instance identities), and every socket in the live function (the token comes in Socket.IO's CONNECT packet, after $connect): an API Gateway authorizer would see none of them",
	"AwsSolutions-SMG4":  "the master key cannot rotate without making the sealed values in the table unreadable (kiln's own key rotation is the operator's), and the GitHub App's private key and webhook secret are rotated in GitHub, then stored here by the operator (docs/deploy.md section 2)",
	"AwsSolutions-SF2":   "X-Ray tracing of the state machine is the operator's choice (kiln:tracing): off by default for its cost",
	"AwsSolutions-SQS3":  "the dead-letter queues are dead-letter queues: nothing redrives from them but the operator",
	"AwsSolutions-S1":    "the artifacts bucket is written and read through presigned URLs the API signs and records; server access logs would need a second bucket and log nothing kiln does not already record (use CloudTrail data events for an audit)",
	"AwsSolutions-CB4":   "the host project produces no CodeBuild artifacts or caches: its build writes only its logs; a customer managed key would have to be granted to the hosts' role, which reaches no key by design (TestHostRoleReachesNothing)",
	"AwsSolutions-VPC7":  "the Windows and Linux hosts' VPCs accept no inbound connection (no inbound rule) and their hosts reach only the egress ports of kiln:windowsEgressPorts, kiln:linuxEgressPorts; flow logs would cost per GB for nothing to investigate",
	"AwsSolutions-AS3":   "the Windows and Linux hosts' groups scale on kiln's own metrics and the schedule ends their hosts; the alarms of section 6 watch kiln, not the group's activity",
}

// addNagSuppressions records nagSuppressions on the stack.
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
}
