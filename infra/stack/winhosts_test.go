package stack_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"

	"github.com/kilnbuild/kiln/infra/stack"
)

// launchTemplateData is the data of the Windows hosts' launch template.
func launchTemplateData(t *testing.T) obj {
	t.Helper()
	return props(t, "AWS::EC2::LaunchTemplate")["LaunchTemplateData"].(obj)
}

func TestWindowsHostTemplate(t *testing.T) {
	data := launchTemplateData(t)
	sg := logicalID(t, "AWS::EC2::SecurityGroup")
	for name, want := range map[string]any{
		"ImageId":      testWindowsAMI,
		"InstanceType": "m6i.4xlarge",
		// IMDSv2 only, one hop: a container on the host cannot reach the metadata service.
		"MetadataOptions": obj{"HttpEndpoint": "enabled", "HttpTokens": "required", "HttpPutResponseHopLimit": 1},
		// The agent ends its instance after one build by shutting Windows down.
		"InstanceInitiatedShutdownBehavior": "terminate",
		"BlockDeviceMappings": []any{obj{"DeviceName": "/dev/sda1", "Ebs": obj{
			"DeleteOnTermination": true, "Encrypted": true, "KmsKeyId": arnOf(logicalID(t, "AWS::KMS::Key")),
			"VolumeSize": stack.WindowsRootVolumeGiB, "VolumeType": "gp3",
		}}},
		"NetworkInterfaces":  []any{obj{"AssociatePublicIpAddress": true, "DeviceIndex": 0, "Groups": []any{obj{"Fn::GetAtt": []any{sg, "GroupId"}}}}},
		"IamInstanceProfile": obj{"Arn": arnOf(logicalID(t, "AWS::IAM::InstanceProfile"))},
	} {
		if !equalJSON(data[name], want) {
			t.Errorf("%s = %s\nwant %s", name, jsonString(data[name]), jsonString(want))
		}
	}
	// No key pair: operators use Session Manager.
	for _, name := range []string{"KeyName", "KeyPair"} {
		if v, ok := data[name]; ok {
			t.Errorf("launch template has %s %v", name, v)
		}
	}
	// The user data, at every boot: the agent's configuration file (where the API is), its
	// service started, the launch lifecycle action completed; no machine environment variable
	// (the running service would not see it before a reboot).
	ud := joinText(data["UserData"].(obj)["Fn::Base64"])
	api := "{GetAtt:" + httpAPIID(t) + ".ApiEndpoint}"
	for _, want := range []string{
		"<persist>true</persist>",
		`Set-Content -Path 'C:\ProgramData\kiln\agent.conf' -Encoding ASCII -Value @('KILN_AGENT_EC2=1', 'KILN_HOST_URL=` + api + `')`,
		"Start-Service -Name kiln-agent",
		"Complete-ASLifecycleAction -AutoScalingGroupName '{Ref:AWS::StackName}-windows-hosts' -LifecycleHookName 'kiln-host-ready' -InstanceId $instanceId -LifecycleActionResult CONTINUE -Region '{Ref:AWS::Region}'",
	} {
		if !strings.Contains(ud, want) {
			t.Errorf("user data lacks %q:\n%s", want, ud)
		}
	}
	if i, j := strings.Index(ud, "Start-Service"), strings.Index(ud, "Complete-ASLifecycleAction"); i < 0 || j < i {
		t.Errorf("the lifecycle action is completed before the service is started:\n%s", ud)
	}
	if strings.Contains(ud, "SetEnvironmentVariable") {
		t.Errorf("user data sets a machine environment variable:\n%s", ud)
	}
	if stack.WindowsAgentConfigFile != `C:\ProgramData\kiln\agent.conf` {
		t.Errorf("WindowsAgentConfigFile %s: docs/deploy.md names C:\\ProgramData\\kiln\\agent.conf", stack.WindowsAgentConfigFile)
	}
}

// TestWindowsHostLaunchHook: instances wait on launch (into the warm pool and out of it) until
// their user data completed the action; one that never does is abandoned.
func TestWindowsHostLaunchHook(t *testing.T) {
	hook := props(t, "AWS::AutoScaling::LifecycleHook")
	want := obj{
		"AutoScalingGroupName": groupNameOf(t), "LifecycleHookName": "kiln-host-ready",
		"LifecycleTransition": "autoscaling:EC2_INSTANCE_LAUNCHING", "DefaultResult": "ABANDON", "HeartbeatTimeout": 1200,
	}
	if !equalJSON(hook, want) {
		t.Errorf("lifecycle hook %s\nwant %s", jsonString(hook), jsonString(want))
	}
}

// groupNameOf is the Windows host group's name as the template refers to it.
func groupNameOf(t *testing.T) any {
	return ref(logicalID(t, "AWS::AutoScaling::AutoScalingGroup"))
}

// joinText is a template value as text: an Fn::Join's parts joined, Ref and Fn::GetAtt as
// {Ref:name} and {GetAtt:id.attribute}.
func joinText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case obj:
		if j, ok := v["Fn::Join"].([]any); ok {
			var b strings.Builder
			for _, p := range j[1].([]any) {
				b.WriteString(joinText(p))
			}
			return b.String()
		}
		if r, ok := v["Ref"].(string); ok {
			return "{Ref:" + r + "}"
		}
		if g, ok := v["Fn::GetAtt"].([]any); ok {
			return "{GetAtt:" + g[0].(string) + "." + g[1].(string) + "}"
		}
	}
	return jsonString(v)
}

// TestWindowsHostSecurityGroup: nothing comes in; out, only the configured TCP ports.
func TestWindowsHostSecurityGroup(t *testing.T) {
	sg := props(t, "AWS::EC2::SecurityGroup")
	if v, ok := sg["SecurityGroupIngress"]; ok {
		t.Errorf("ingress rules: %s", jsonString(v))
	}
	check(t, func() { template.ResourceCountIs(jsii.String("AWS::EC2::SecurityGroupIngress"), jsii.Number(0)) })
	check(t, func() { template.ResourceCountIs(jsii.String("AWS::EC2::SecurityGroupEgress"), jsii.Number(0)) })
	want := []any{
		obj{"CidrIp": "0.0.0.0/0", "Description": "out to TCP 443", "FromPort": 443, "IpProtocol": "tcp", "ToPort": 443},
		obj{"CidrIp": "0.0.0.0/0", "Description": "out to TCP 1666", "FromPort": 1666, "IpProtocol": "tcp", "ToPort": 1666},
	}
	if !equalJSON(sg["SecurityGroupEgress"], want) {
		t.Errorf("egress %s\nwant %s", jsonString(sg["SecurityGroupEgress"]), jsonString(want))
	}
}

func TestWindowsHostGroup(t *testing.T) {
	asg := props(t, "AWS::AutoScaling::AutoScalingGroup")
	for name, want := range map[string]any{
		// Named after the stack: the user data names it to complete its lifecycle action.
		"AutoScalingGroupName": obj{"Fn::Join": []any{"", []any{ref("AWS::StackName"), "-windows-hosts"}}},
		"MinSize":              "0",
		"MaxSize":              "12",
		// The group never terminates a host in the middle of a build.
		"NewInstancesProtectedFromScaleIn": true,
		"LaunchTemplate": obj{
			"LaunchTemplateId": ref(logicalID(t, "AWS::EC2::LaunchTemplate")),
			"Version":          obj{"Fn::GetAtt": []any{logicalID(t, "AWS::EC2::LaunchTemplate"), "LatestVersionNumber"}},
		},
		"ServiceLinkedRoleARN": serviceRoleArn(t),
	} {
		if !equalJSON(asg[name], want) {
			t.Errorf("%s = %s\nwant %s", name, jsonString(asg[name]), jsonString(want))
		}
	}
	// The warm pool: stopped instances, never one returned to it on scale-in.
	pool := props(t, "AWS::AutoScaling::WarmPool")
	wantPool := obj{
		"AutoScalingGroupName": groupNameOf(t), "PoolState": "Stopped", "MinSize": 3, "MaxGroupPreparedCapacity": 3,
		"InstanceReusePolicy": obj{"ReuseOnScaleIn": false},
	}
	if !equalJSON(pool, wantPool) {
		t.Errorf("warm pool %s\nwant %s", jsonString(pool), jsonString(wantPool))
	}
	// Scaled out on the waiting builds: an alarm at 1 or more on the metric, its step policy.
	policy := logicalID(t, "AWS::AutoScaling::ScalingPolicy")
	check(t, func() {
		template.HasResourceProperties(jsii.String("AWS::AutoScaling::ScalingPolicy"), obj{
			"AutoScalingGroupName": groupNameOf(t),
			"PolicyType":           "StepScaling",
			"AdjustmentType":       "ChangeInCapacity",
			"StepAdjustments": []any{
				obj{"MetricIntervalLowerBound": 0, "MetricIntervalUpperBound": 2, "ScalingAdjustment": 1},
				obj{"MetricIntervalLowerBound": 2, "MetricIntervalUpperBound": 9, "ScalingAdjustment": 3},
				obj{"MetricIntervalLowerBound": 9, "ScalingAdjustment": 10},
			},
		})
	})
	check(t, func() {
		template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
			"Namespace":          "kiln",
			"MetricName":         "WaitingWin64Builds",
			"Statistic":          "Maximum",
			"Period":             60,
			"ComparisonOperator": "GreaterThanOrEqualToThreshold",
			"Threshold":          1,
			"AlarmActions":       []any{ref(policy)},
		})
	})
	if stack.WaitingWin64BuildsNamespace != "kiln" || stack.WaitingWin64BuildsMetric != "WaitingWin64Builds" {
		t.Errorf("metric %s/%s: docs/deploy.md names kiln/WaitingWin64Builds", stack.WaitingWin64BuildsNamespace, stack.WaitingWin64BuildsMetric)
	}
}

// TestWindowsHostRole: the hosts run a tenant's code, which can read the role's credentials from
// the metadata service. The role holds AWS's Session Manager policy, completing the launch
// lifecycle action on its group, and nothing else: no resource policy naming it, and Parameter
// Store denied.
func TestWindowsHostRole(t *testing.T) {
	role := idOf(t, "AWS::IAM::Role", "WindowsHostRole")
	r := resources(t, "AWS::IAM::Role")[role]["Properties"].(obj)
	ssm := obj{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":iam::aws:policy/AmazonSSMManagedInstanceCore"}}}
	if !equalJSON(r["ManagedPolicyArns"], []any{ssm}) {
		t.Errorf("managed policies %s, want AmazonSSMManagedInstanceCore only", jsonString(r["ManagedPolicyArns"]))
	}
	if !equalJSON(r["AssumeRolePolicyDocument"].(obj)["Statement"], []any{obj{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": obj{"Service": "ec2.amazonaws.com"}}}) {
		t.Errorf("assumed by %s, want EC2 only", jsonString(r["AssumeRolePolicyDocument"]))
	}
	// One Allow: completing its launch lifecycle action (the user data), on the hosts' group.
	groupArn := obj{"Fn::Join": []any{"", []any{
		"arn:", ref("AWS::Partition"), ":autoscaling:", ref("AWS::Region"), ":", ref("AWS::AccountId"),
		":autoScalingGroup:*:autoScalingGroupName/", ref("AWS::StackName"), "-windows-hosts",
	}}}
	if s := roleStatements(t, role); len(s) != 1 || !slices.Equal(s[0].actions, []string{"autoscaling:CompleteLifecycleAction"}) ||
		len(s[0].resources) != 1 || !equalJSON(s[0].resources[0], groupArn) {
		t.Errorf("the host role allows %+v, want CompleteLifecycleAction on %s only", s, jsonString(groupArn))
	}
	var denied []string
	for _, p := range resources(t, "AWS::IAM::Policy") {
		if !slices.ContainsFunc(asList(p["Properties"].(obj)["Roles"]), func(v any) bool { return equalJSON(v, ref(role)) }) {
			continue
		}
		for _, s := range asList(p["Properties"].(obj)["PolicyDocument"].(obj)["Statement"]) {
			s := s.(obj)
			if s["Effect"] == "Deny" && s["Resource"] == "*" {
				for _, a := range asList(s["Action"]) {
					denied = append(denied, a.(string))
				}
			}
		}
	}
	if want := []string{"ssm:GetParameter", "ssm:GetParameterHistory", "ssm:GetParameters", "ssm:GetParametersByPath"}; !slices.Equal(denied, want) {
		t.Errorf("denied %v, want %v", denied, want)
	}
	if p := props(t, "AWS::IAM::InstanceProfile"); !equalJSON(p["Roles"], []any{ref(role)}) {
		t.Errorf("instance profile roles %s", jsonString(p["Roles"]))
	}
	for id, typ := range map[string]string{"key": "AWS::KMS::Key", "bucket": "AWS::S3::BucketPolicy", "queues": "AWS::SQS::QueuePolicy"} {
		for _, res := range resources(t, typ) {
			if strings.Contains(jsonString(res), `"`+role+`"`) {
				t.Errorf("the %s policy names the Windows host role", id)
			}
		}
	}
}

// serviceRoleArn is the ARN of the group's own Auto Scaling service-linked role.
func serviceRoleArn(t *testing.T) obj {
	return obj{"Fn::Join": []any{"", []any{
		"arn:", ref("AWS::Partition"), ":iam::", ref("AWS::AccountId"),
		":role/aws-service-role/autoscaling.amazonaws.com/", ref(logicalID(t, "AWS::IAM::ServiceLinkedRole")),
	}}}
}

// TestWindowsHostVolumeKey: the group's service-linked role may use the key for the hosts'
// volumes (AWS's documented key policy for Auto Scaling with a customer managed key), the
// service-linked role is the stack's own, and the key waits for it.
func TestWindowsHostVolumeKey(t *testing.T) {
	check(t, func() {
		template.HasResourceProperties(jsii.String("AWS::IAM::ServiceLinkedRole"), obj{
			"AWSServiceName": "autoscaling.amazonaws.com", "CustomSuffix": ref("AWS::StackName"),
		})
	})
	principal := obj{"AWS": serviceRoleArn(t)}
	want := []any{
		obj{"Action": []any{"kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:GenerateDataKey*", "kms:ReEncrypt*"},
			"Effect": "Allow", "Principal": principal, "Resource": "*", "Sid": "WindowsHostVolumes"},
		obj{"Action": "kms:CreateGrant", "Condition": obj{"Bool": obj{"kms:GrantIsForAWSResource": true}},
			"Effect": "Allow", "Principal": principal, "Resource": "*", "Sid": "WindowsHostVolumeGrants"},
	}
	key := resources(t, "AWS::KMS::Key")[logicalID(t, "AWS::KMS::Key")]
	var got []any
	for _, s := range asList(key["Properties"].(obj)["KeyPolicy"].(obj)["Statement"]) {
		if strings.Contains(jsonString(s), "autoscaling.amazonaws.com") {
			got = append(got, s)
		}
	}
	if !equalJSON(got, want) {
		t.Errorf("key policy for the service-linked role\n%s\nwant\n%s", jsonString(got), jsonString(want))
	}
	if !equalJSON(key["DependsOn"], []any{logicalID(t, "AWS::IAM::ServiceLinkedRole")}) {
		t.Errorf("key depends on %v, want the service-linked role", key["DependsOn"])
	}
}

// TestNoWindowsHosts: without kiln:windowsAmiId the stack has no Windows hosts and says so.
func TestNoWindowsHosts(t *testing.T) {
	for _, typ := range []string{
		"AWS::EC2::LaunchTemplate", "AWS::AutoScaling::AutoScalingGroup", "AWS::AutoScaling::WarmPool",
		"AWS::AutoScaling::ScalingPolicy", "AWS::EC2::VPC", "AWS::EC2::SecurityGroup", "AWS::IAM::InstanceProfile",
		"AWS::IAM::ServiceLinkedRole",
	} {
		check(t, func() { other.ResourceCountIs(jsii.String(typ), jsii.Number(0)) })
	}
	check(t, func() {
		other.HasOutput(jsii.String("WindowsHostGroup"), obj{"Value": "none: kiln:windowsAmiId is not set"})
	})
	check(t, func() {
		other.HasOutput(jsii.String("LinuxHostGroup"), obj{"Value": "none: kiln:linuxAmiId is not set"})
	})
	check(t, func() {
		template.HasOutput(jsii.String("LinuxHostGroup"), obj{"Value": "none: kiln:linuxAmiId is not set"})
	})
	check(t, func() {
		template.HasOutput(jsii.String("WindowsHostGroup"), obj{"Value": ref(logicalID(t, "AWS::AutoScaling::AutoScalingGroup"))})
	})
	// No function is told of a group, nor allowed to end its hosts or publish its metric.
	var fns map[string]*map[string]any
	check(t, func() { fns = *other.FindResources(jsii.String("AWS::Lambda::Function"), nil) })
	if len(fns) != len(stack.Functions) || strings.Contains(jsonString(fns), "KILN_WINDOWS_HOST_GROUP") || strings.Contains(jsonString(fns), "KILN_LINUX_HOST") {
		t.Errorf("functions %s: want %d, without KILN_WINDOWS_HOST_GROUP or KILN_LINUX_HOST_*", jsonString(fns), len(stack.Functions))
	}
	var policies map[string]*map[string]any
	check(t, func() { policies = *other.FindResources(jsii.String("AWS::IAM::Policy"), nil) })
	for _, action := range []string{"autoscaling:", "cloudwatch:PutMetricData"} {
		if strings.Contains(jsonString(policies), action) {
			t.Errorf("a policy of the stack without Windows hosts allows %s", action)
		}
	}
	// Nor does the key name an Auto Scaling role.
	var keys map[string]*map[string]any
	check(t, func() { keys = *other.FindResources(jsii.String("AWS::KMS::Key"), nil) })
	if len(keys) != 1 || strings.Contains(jsonString(keys), "autoscaling") {
		t.Errorf("key %s: want one, naming no Auto Scaling role", jsonString(keys))
	}
}
