package stack_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"

	"github.com/kilnbuild/kiln/infra/stack"
)

// hosts is the template of the stack with Windows and Linux hosts (TestMain).
var hosts assertions.Template

// hostsResources returns the hosts stack's resources of the type, by logical id.
func hostsResources(t *testing.T, typ string) map[string]obj {
	t.Helper()
	out := map[string]obj{}
	var all map[string]any
	check(t, func() { all = (*hosts.ToJSON())["Resources"].(map[string]any) })
	for id, r := range all {
		if r := r.(obj); r["Type"] == typ {
			out[id] = r
		}
	}
	return out
}

// hostsID returns the logical id of the hosts stack's resource of the type made from the
// construct id.
func hostsID(t *testing.T, typ, constructID string) string {
	t.Helper()
	var ids []string
	for id := range hostsResources(t, typ) {
		if m := cdkID.FindStringSubmatch(id); m != nil && m[1] == constructID {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("%s %s: want 1 resource, got %v", typ, constructID, ids)
	}
	return ids[0]
}

func hostsProps(t *testing.T, typ, constructID string) obj {
	t.Helper()
	return hostsResources(t, typ)[hostsID(t, typ, constructID)]["Properties"].(obj)
}

// TestLinuxHostTemplate: the Linux hosts' launch template is the Windows hosts' (IMDSv2 only,
// terminate on shutdown, an encrypted gp3 root volume deleted with the instance, no key pair)
// on the Linux AMI; its user data runs `kiln agent --ec2-host` as the AMI's non-root user from
// a systemd unit started at every boot, tells it where the API is and that it builds Linux, and
// completes the launch lifecycle action at every boot.
func TestLinuxHostTemplate(t *testing.T) {
	data := hostsProps(t, "AWS::EC2::LaunchTemplate", "LinuxHostTemplate")["LaunchTemplateData"].(obj)
	key := hostsResources(t, "AWS::KMS::Key")
	var keyID string
	for id := range key {
		keyID = id
	}
	for name, want := range map[string]any{
		"ImageId":                           testLinuxAMI,
		"InstanceType":                      stack.DefaultLinuxInstanceType,
		"MetadataOptions":                   obj{"HttpEndpoint": "enabled", "HttpTokens": "required", "HttpPutResponseHopLimit": 1},
		"InstanceInitiatedShutdownBehavior": "terminate",
		"BlockDeviceMappings": []any{obj{"DeviceName": "/dev/xvda", "Ebs": obj{
			"DeleteOnTermination": true, "Encrypted": true, "KmsKeyId": arnOf(keyID),
			"VolumeSize": stack.LinuxRootVolumeGiB, "VolumeType": "gp3",
		}}},
		"IamInstanceProfile": obj{"Arn": arnOf(hostsID(t, "AWS::IAM::InstanceProfile", "LinuxHostTemplateProfile"))},
	} {
		if !equalJSON(data[name], want) {
			t.Errorf("%s = %s\nwant %s", name, jsonString(data[name]), jsonString(want))
		}
	}
	if _, ok := data["KeyName"]; ok {
		t.Error("the Linux launch template has a key pair")
	}
	ud := joinText(data["UserData"].(obj)["Fn::Base64"])
	api := "{GetAtt:" + hostsID(t, "AWS::ApiGatewayV2::Api", "HttpAPI") + ".ApiEndpoint}"
	for _, want := range []string{
		"#!/bin/bash",
		"'KILN_AGENT_EC2=1' 'KILN_AGENT_PLATFORMS=Linux' 'KILN_AGENT_ENGINES=/opt/kiln/engines' 'KILN_HOST_URL=" + api + "' > /etc/kiln/agent.env",
		"User=kiln\nGroup=kiln\nEnvironmentFile=/etc/kiln/agent.env\nExecStart=/usr/local/bin/kiln agent --ec2-host\n",
		"systemctl enable --now kiln-agent.service",
		"cat > /var/lib/cloud/scripts/per-boot/kiln-host-ready.sh",
		"aws autoscaling complete-lifecycle-action --auto-scaling-group-name '{Ref:AWS::StackName}-linux-hosts' --lifecycle-hook-name 'kiln-host-ready' --instance-id \"$instance\" --lifecycle-action-result CONTINUE --region '{Ref:AWS::Region}'",
	} {
		if !strings.Contains(ud, want) {
			t.Errorf("user data lacks %q:\n%s", want, ud)
		}
	}
	if strings.Contains(ud, "User=root") || strings.Contains(ud, "sudo") {
		t.Errorf("the agent may run as root:\n%s", ud)
	}
}

// TestLinuxHostGroup: the Linux hosts' group, beside the Windows hosts' in the same stack: its
// own name, size and warm pool of stopped instances, scaled on kiln/WaitingLinuxBuilds (the
// Windows group still on WaitingWin64Builds), both launched by the stack's one service-linked
// role.
func TestLinuxHostGroup(t *testing.T) {
	linux := hostsID(t, "AWS::AutoScaling::AutoScalingGroup", "LinuxHostsASG")
	windows := hostsID(t, "AWS::AutoScaling::AutoScalingGroup", "WindowsHostsASG")
	asg := hostsResources(t, "AWS::AutoScaling::AutoScalingGroup")[linux]["Properties"].(obj)
	slrs := hostsResources(t, "AWS::IAM::ServiceLinkedRole")
	if len(slrs) != 1 {
		t.Fatalf("service-linked roles: %d, want one for both groups", len(slrs))
	}
	for name, want := range map[string]any{
		"AutoScalingGroupName":             obj{"Fn::Join": []any{"", []any{ref("AWS::StackName"), "-linux-hosts"}}},
		"MinSize":                          "0",
		"MaxSize":                          "8",
		"NewInstancesProtectedFromScaleIn": true,
	} {
		if !equalJSON(asg[name], want) {
			t.Errorf("%s = %s\nwant %s", name, jsonString(asg[name]), jsonString(want))
		}
	}
	if !equalJSON(asg["ServiceLinkedRoleARN"], hostsResources(t, "AWS::AutoScaling::AutoScalingGroup")[windows]["Properties"].(obj)["ServiceLinkedRoleARN"]) {
		t.Error("the Linux group's service-linked role is not the Windows group's")
	}
	var pools []obj
	for _, p := range hostsResources(t, "AWS::AutoScaling::WarmPool") {
		if equalJSON(p["Properties"].(obj)["AutoScalingGroupName"], ref(linux)) {
			pools = append(pools, p["Properties"].(obj))
		}
	}
	wantPool := obj{"AutoScalingGroupName": ref(linux), "PoolState": "Stopped", "MinSize": 4, "MaxGroupPreparedCapacity": 4,
		"InstanceReusePolicy": obj{"ReuseOnScaleIn": false}}
	if len(pools) != 1 || !equalJSON(pools[0], wantPool) {
		t.Errorf("Linux warm pools %s\nwant %s", jsonString(pools), jsonString(wantPool))
	}
	// Each group's step policy is the action of the alarm on its own metric.
	metricOf := map[string]string{}
	for _, a := range hostsResources(t, "AWS::CloudWatch::Alarm") {
		p := a["Properties"].(obj)
		if p["Namespace"] != "kiln" {
			continue
		}
		for _, action := range asList(p["AlarmActions"]) {
			policy := hostsResources(t, "AWS::AutoScaling::ScalingPolicy")[action.(obj)["Ref"].(string)]["Properties"].(obj)
			metricOf[jsonString(policy["AutoScalingGroupName"])] = p["MetricName"].(string)
		}
	}
	if metricOf[jsonString(ref(linux))] != "WaitingLinuxBuilds" || metricOf[jsonString(ref(windows))] != "WaitingWin64Builds" {
		t.Errorf("scaling metrics by group: %v", metricOf)
	}
}

// TestLinuxHostRole: as the Windows hosts' role, the Linux hosts' holds AWS's Session Manager
// policy and completing the launch lifecycle action on its own group only.
func TestLinuxHostRole(t *testing.T) {
	role := hostsID(t, "AWS::IAM::Role", "LinuxHostRole")
	r := hostsResources(t, "AWS::IAM::Role")[role]["Properties"].(obj)
	ssm := obj{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":iam::aws:policy/AmazonSSMManagedInstanceCore"}}}
	if !equalJSON(r["ManagedPolicyArns"], []any{ssm}) {
		t.Errorf("managed policies %s, want AmazonSSMManagedInstanceCore only", jsonString(r["ManagedPolicyArns"]))
	}
	groupArn := obj{"Fn::Join": []any{"", []any{
		"arn:", ref("AWS::Partition"), ":autoscaling:", ref("AWS::Region"), ":", ref("AWS::AccountId"),
		":autoScalingGroup:*:autoScalingGroupName/", ref("AWS::StackName"), "-linux-hosts",
	}}}
	var allowed, denied []string
	for _, p := range hostsResources(t, "AWS::IAM::Policy") {
		if !slices.ContainsFunc(asList(p["Properties"].(obj)["Roles"]), func(v any) bool { return equalJSON(v, ref(role)) }) {
			continue
		}
		for _, s := range asList(p["Properties"].(obj)["PolicyDocument"].(obj)["Statement"]) {
			s := s.(obj)
			for _, a := range asList(s["Action"]) {
				if s["Effect"] == "Deny" && s["Resource"] == "*" {
					denied = append(denied, a.(string))
				} else if s["Effect"] == "Allow" && equalJSON(s["Resource"], groupArn) {
					allowed = append(allowed, a.(string))
				} else {
					t.Errorf("the Linux host role: %s", jsonString(s))
				}
			}
		}
	}
	if !slices.Equal(allowed, []string{"autoscaling:CompleteLifecycleAction"}) {
		t.Errorf("allowed %v, want CompleteLifecycleAction on its group", allowed)
	}
	slices.Sort(denied)
	if want := []string{"ssm:GetParameter", "ssm:GetParameterHistory", "ssm:GetParameters", "ssm:GetParametersByPath"}; !slices.Equal(denied, want) {
		t.Errorf("denied %v, want %v", denied, want)
	}
}

// TestLinuxHostsInTheFunctions: every function is told the Linux hosts' group and engine
// versions (the task function routes by them); the schedule function may end hosts of both
// groups and publish their metrics; the API function gets the identity certificate.
func TestLinuxHostsInTheFunctions(t *testing.T) {
	linux := hostsID(t, "AWS::AutoScaling::AutoScalingGroup", "LinuxHostsASG")
	windows := hostsID(t, "AWS::AutoScaling::AutoScalingGroup", "WindowsHostsASG")
	var schedule string
	for id, fn := range hostsResources(t, "AWS::Lambda::Function") {
		env := fn["Properties"].(obj)["Environment"].(obj)["Variables"].(obj)
		if !equalJSON(env["KILN_LINUX_HOST_GROUP"], ref(linux)) || env["KILN_LINUX_HOST_ENGINES"] != "5.4,5.5" ||
			!equalJSON(env["KILN_WINDOWS_HOST_GROUP"], ref(windows)) || env["KILN_AWS_ACCOUNT_ID"] == nil {
			t.Errorf("function %s: environment %s", id, jsonString(env))
		}
		if m := cdkID.FindStringSubmatch(id); m != nil && m[1] == "ScheduleFunction" {
			schedule = fn["Properties"].(obj)["Role"].(obj)["Fn::GetAtt"].([]any)[0].(string)
		}
	}
	var terminable []string
	for _, p := range hostsResources(t, "AWS::IAM::Policy") {
		if !slices.ContainsFunc(asList(p["Properties"].(obj)["Roles"]), func(v any) bool { return equalJSON(v, ref(schedule)) }) {
			continue
		}
		for _, s := range asList(p["Properties"].(obj)["PolicyDocument"].(obj)["Statement"]) {
			s := s.(obj)
			if slices.Contains(asList(s["Action"]), any("autoscaling:TerminateInstanceInAutoScalingGroup")) {
				for _, r := range asList(s["Resource"]) {
					terminable = append(terminable, jsonString(r))
				}
			}
		}
	}
	slices.Sort(terminable)
	want := []string{jsonString(obj{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":autoscaling:", ref("AWS::Region"), ":", ref("AWS::AccountId"), ":autoScalingGroup:*:autoScalingGroupName/", ref(linux)}}}),
		jsonString(obj{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":autoscaling:", ref("AWS::Region"), ":", ref("AWS::AccountId"), ":autoScalingGroup:*:autoScalingGroupName/", ref(windows)}}})}
	slices.Sort(want)
	if !slices.Equal(terminable, want) {
		t.Errorf("the schedule may terminate instances of %v\nwant %v", terminable, want)
	}
	outputs := (*hosts.ToJSON())["Outputs"].(map[string]any)
	if !equalJSON(outputs["LinuxHostGroup"].(obj)["Value"], ref(linux)) {
		t.Errorf("LinuxHostGroup output %s", jsonString(outputs["LinuxHostGroup"]))
	}
}
