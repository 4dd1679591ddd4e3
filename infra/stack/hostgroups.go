package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsautoscaling"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// HostsMetricNamespace is the namespace of the metrics the hosted host groups scale on, one per
// platform (WaitingWin64BuildsMetric, WaitingLinuxBuildsMetric): the number of builds waiting
// for one of the group's hosts. The service publishes them (docs/deploy.md); a group's scaling
// policy adds hosts while its metric is 1 or more.
const HostsMetricNamespace = "kiln"

// HostLaunchHook is the groups' launch lifecycle hook the user data completes;
// HostLaunchHookMinutes how long an instance may take to run its user data before it is
// abandoned.
const (
	HostLaunchHook        = "kiln-host-ready"
	HostLaunchHookMinutes = 20
)

// hostGroup is what createHostGroup defines.
type hostGroup struct {
	group awsautoscaling.AutoScalingGroup
	role  awsiam.Role
	// suffix follows the stack's name in the group's name.
	suffix string
}

// hostGroupSpec is one platform's hosted hosts.
type hostGroupSpec struct {
	// id starts the construct ids (<id>HostsVpc, <id>HostRole, <id>Hosts…); what names the hosts
	// in descriptions; suffix follows the stack's name in the group's name.
	id, what, suffix string
	image            awsec2.IMachineImage
	instanceType     string
	// rootDevice is the AMI's root device; rootGiB its size.
	rootDevice         string
	rootGiB            int
	warmPool, maxHosts int
	egressPorts        []int
	// metric is the waiting-builds metric (in HostsMetricNamespace) the group scales out on.
	metric string
	// userData is the hosts' user data, given the group's name: it configures and starts the
	// agent (`kiln agent --ec2-host`) and completes HostLaunchHook, at every boot.
	userData func(groupName *string) awsec2.UserData
}

// createHostGroup defines one platform's hosted build hosts: a launch template, an Auto Scaling
// group of at most maxHosts, with a warm pool of stopped instances, scaled out on the platform's
// waiting-builds metric.
//
// A host runs one build and is gone: every build starts on an instance no other build ran on.
// Once its build ended, the schedule function terminates the instance and lowers the group's
// desired capacity (allowHostGroupsControl); the next build gets a fresh instance from the warm
// pool, prepared from the AMI and never used. Instances are never returned to the pool on
// scale-in (ReuseOnScaleIn false) and the root volume is deleted with its instance, so no state
// of one organization's build survives into another's. New instances are protected from
// scale-in: the group never terminates a host in the middle of a build.
//
// The agent (`kiln agent --ec2-host`, from the AMI):
//   - waits until the instance is in service (IMDSv2 autoscaling/target-lifecycle-state is
//     InService): an instance warming up for the pool claims nothing;
//   - claims one build of its group's hosted pool by presenting the instance identity document
//     and signature IMDS serves (no service secret is ever stored on the host or in the AMI);
//     the API verifies them, finds the group the instance is in service in (a Windows host
//     claims Win64 builds only, a Linux host Linux builds only), records the instance's one
//     claim, ever, and hands it the build's own host credential;
//   - runs it (checkout, RunUAT, package, upload, logs, heartbeats) and claims nothing more;
//   - is then terminated by the schedule function, as is a host that stayed in service without
//     a build for the idle limit while none of its pool waits. A shutdown from the host
//     terminates it too (the shutdown behaviour below): the build's volume is gone either way.
func (s *KilnStack) createHostGroup(spec hostGroupSpec) *hostGroup {
	// A VPC of public subnets only: the hosts reach the API, S3 and SSM over the internet (no NAT
	// gateway to pay for) and accept no connection (their security group has no inbound rule).
	vpc := awsec2.NewVpc(s.Stack, jsii.String(spec.id+"HostsVpc"), &awsec2.VpcProps{
		MaxAzs:      jsii.Number(2),
		NatGateways: jsii.Number(0),
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
			{Name: jsii.String("Public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(20)},
		},
		// The default security group is unused; restricting it takes a custom resource (a
		// Lambda): the hosts use their own group below.
		RestrictDefaultSecurityGroup: jsii.Bool(false),
	})
	sg := awsec2.NewSecurityGroup(s.Stack, jsii.String(spec.id+"HostsSecurityGroup"), &awsec2.SecurityGroupProps{
		Vpc:              vpc,
		Description:      jsii.String("kiln " + spec.what + " build hosts: no inbound, outbound HTTPS only"),
		AllowAllOutbound: jsii.Bool(false),
	})
	for _, port := range spec.egressPorts {
		sg.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(float64(port))), jsii.String(fmt.Sprintf("out to TCP %d", port)), jsii.Bool(false))
	}

	// The instance role: Session Manager and nothing else. A build is a tenant's code and runs
	// on the instance, so it can read the role's credentials from the metadata service: the role
	// reaches no table, bucket, secret, key or queue. The agent talks to the API over HTTPS with
	// its own per-host credential.
	role := awsiam.NewRole(s.Stack, jsii.String(spec.id+"HostRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("ec2.amazonaws.com"), nil),
		Description: jsii.String("kiln " + spec.what + " build hosts: SSM Session Manager only"),
		ManagedPolicies: &[]awsiam.IManagedPolicy{
			// Operator access through SSM Session Manager: a shell with no open port and no key.
			awsiam.ManagedPolicy_FromAwsManagedPolicyName(jsii.String("AmazonSSMManagedInstanceCore")),
		},
	})
	// AmazonSSMManagedInstanceCore also lets the instance read any Parameter Store parameter of
	// the account; a tenant's build must not.
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Effect:    awsiam.Effect_DENY,
		Actions:   jsii.Strings("ssm:GetParameter", "ssm:GetParameters", "ssm:GetParametersByPath", "ssm:GetParameterHistory"),
		Resources: jsii.Strings("*"),
	}))

	// The group's name is fixed (the stack's name and a suffix): the user data names the group to
	// complete its lifecycle action, and the launch template cannot refer to the group it is in.
	groupName := awscdk.Fn_Join(jsii.String(""), &[]*string{awscdk.Aws_STACK_NAME(), jsii.String(spec.suffix)})

	// The hosts' lifecycle hook on launch: an instance waits (Warmed:Pending:Wait going into the
	// warm pool, Pending:Wait leaving it) until its user data completed the action, so it is
	// neither stopped nor put in service before the agent's settings are written and its service
	// is started. Auto Scaling does not wait for user data otherwise. An instance whose user data
	// failed is abandoned (terminated) when the timeout passes.
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("autoscaling:CompleteLifecycleAction"),
		Resources: &[]*string{s.Stack.FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("autoscaling"), Resource: jsii.String("autoScalingGroup"),
			ResourceName: awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("*:autoScalingGroupName/"), groupName}),
			ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
		})},
	}))

	lt := awsec2.NewLaunchTemplate(s.Stack, jsii.String(spec.id+"HostTemplate"), &awsec2.LaunchTemplateProps{
		MachineImage: spec.image,
		InstanceType: awsec2.NewInstanceType(jsii.String(spec.instanceType)),
		UserData:     spec.userData(groupName),
		Role:         role,
		// No key pair: operators use Session Manager.
		SecurityGroup:                     sg,
		AssociatePublicIpAddress:          jsii.Bool(true),
		InstanceInitiatedShutdownBehavior: awsec2.InstanceInitiatedShutdownBehavior_TERMINATE,
		// IMDSv2 only, one hop: a container on the host cannot reach the metadata service.
		HttpEndpoint:            jsii.Bool(true),
		HttpTokens:              awsec2.LaunchTemplateHttpTokens_REQUIRED,
		HttpPutResponseHopLimit: jsii.Number(1),
		BlockDevices: &[]*awsec2.BlockDevice{{
			DeviceName: jsii.String(spec.rootDevice),
			Volume: awsec2.BlockDeviceVolume_Ebs(jsii.Number(float64(spec.rootGiB)), &awsec2.EbsDeviceOptions{
				VolumeType:          awsec2.EbsDeviceVolumeType_GP3,
				Encrypted:           jsii.Bool(true),
				KmsKey:              s.key,
				DeleteOnTermination: jsii.Bool(true),
			}),
		}},
	})

	group := awsautoscaling.NewAutoScalingGroup(s.Stack, jsii.String(spec.id+"Hosts"), &awsautoscaling.AutoScalingGroupProps{
		AutoScalingGroupName:             groupName,
		Vpc:                              vpc,
		VpcSubnets:                       &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PUBLIC},
		LaunchTemplate:                   lt,
		MinCapacity:                      jsii.Number(0),
		MaxCapacity:                      jsii.Number(float64(spec.maxHosts)),
		NewInstancesProtectedFromScaleIn: jsii.Bool(true),
	})
	group.Node().DefaultChild().(awsautoscaling.CfnAutoScalingGroup).SetServiceLinkedRoleArn(s.hostsServiceRole())
	hook := group.AddLifecycleHook(jsii.String("HostReady"), &awsautoscaling.BasicLifecycleHookProps{
		LifecycleHookName:   jsii.String(HostLaunchHook),
		LifecycleTransition: awsautoscaling.LifecycleTransition_INSTANCE_LAUNCHING,
		DefaultResult:       awsautoscaling.DefaultResult_ABANDON,
		HeartbeatTimeout:    awscdk.Duration_Minutes(jsii.Number(HostLaunchHookMinutes)),
	})
	// Stopped, prepared instances (first boot done, the AMI's volume initialized): one starts
	// in a minute or two instead of a fresh launch. MaxGroupPreparedCapacity = MinSize keeps the
	// pool at its size whatever the group's capacity.
	pool := group.AddWarmPool(&awsautoscaling.WarmPoolOptions{
		MinSize:                  jsii.Number(float64(spec.warmPool)),
		MaxGroupPreparedCapacity: jsii.Number(float64(spec.warmPool)),
		PoolState:                awsautoscaling.PoolState_STOPPED,
		ReuseOnScaleIn:           jsii.Bool(false),
	})
	// The pool launches its instances as soon as CloudFormation creates it, and the hook is a
	// resource of its own that CloudFormation may create later: an instance launched before the
	// hook exists is not held in Warmed:Pending:Wait for its user data, and may be stopped into
	// the pool before the agent's settings are written. DependsOn: the hook first.
	pool.Node().AddDependency(hook)
	// Scale out on the builds waiting: one more host per waiting build, up to three at once
	// below ten waiting, ten at once above. The policy counts the hosts still starting
	// (EstimatedInstanceWarmup) so it does not add them twice.
	group.ScaleOnMetric(jsii.String("ScaleOnWaitingBuilds"), &awsautoscaling.BasicStepScalingPolicyProps{
		Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace:  jsii.String(HostsMetricNamespace),
			MetricName: jsii.String(spec.metric),
			Statistic:  jsii.String("Maximum"),
			Period:     awscdk.Duration_Minutes(jsii.Number(1)),
		}),
		AdjustmentType: awsautoscaling.AdjustmentType_CHANGE_IN_CAPACITY,
		ScalingSteps: &[]*awsautoscaling.ScalingInterval{
			{Upper: jsii.Number(1), Change: jsii.Number(0)},
			{Lower: jsii.Number(1), Upper: jsii.Number(3), Change: jsii.Number(1)},
			{Lower: jsii.Number(3), Upper: jsii.Number(10), Change: jsii.Number(3)},
			{Lower: jsii.Number(10), Change: jsii.Number(10)},
		},
		EstimatedInstanceWarmup: awscdk.Duration_Minutes(jsii.Number(5)),
	})
	return &hostGroup{group: group, role: role, suffix: spec.suffix}
}

// hostGroups are the hosted host groups the stack defines (none, Windows, Linux or both).
func (s *KilnStack) hostGroups() []*hostGroup {
	var out []*hostGroup
	for _, g := range []*hostGroup{s.winHosts, s.linuxHosts} {
		if g != nil {
			out = append(out, g)
		}
	}
	return out
}

// allowHostGroupsControl lets the schedule function drive the hosted hosts on its tick: publish
// the waiting-builds metrics (PutMetricData has no resource type in IAM: "*", limited to the
// namespace by its condition key) and end a host whose build ended or that stayed idle,
// decrementing the group's desired capacity (TerminateInstanceInAutoScalingGroup on these groups
// only). A host leaving by itself would make the group launch a replacement: its desired
// capacity would stay.
//
// DescribeAutoScalingInstances (which hosts are in service) has no resource type in IAM: "*".
func (s *KilnStack) allowHostGroupsControl(f *function) {
	groups := s.hostGroups()
	if len(groups) == 0 {
		return
	}
	for _, g := range groups {
		f.allow([]string{"autoscaling:TerminateInstanceInAutoScalingGroup"}, g.group.AutoScalingGroupArn())
	}
	f.allow([]string{"autoscaling:DescribeAutoScalingInstances"}, jsii.String("*"))
	f.role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings("cloudwatch:PutMetricData"),
		Resources:  jsii.Strings("*"),
		Conditions: &map[string]any{"StringEquals": map[string]any{"cloudwatch:namespace": HostsMetricNamespace}},
	}))
}

// allowHostGroupsClaims lets the API function tell a claim of one of the hosted hosts: the host
// presents its instance identity document, which the API verifies with AWS's certificate for
// the region (KILN_EC2_IDENTITY_CERTS), checks against the account (KILN_AWS_ACCOUNT_ID) and,
// with DescribeAutoScalingInstances (no resource type in IAM: "*"), against the groups'
// instances in service. Only the API function gets the certificate, which other functions
// would carry for nothing in their 4 KB of environment.
func (s *KilnStack) allowHostGroupsClaims(f *function) {
	if len(s.hostGroups()) == 0 {
		return
	}
	f.allow([]string{"autoscaling:DescribeAutoScalingInstances"}, jsii.String("*"))
	f.fn.AddEnvironment(jsii.String("KILN_EC2_IDENTITY_CERTS"), jsii.String(s.props.EC2IdentityCertificates), nil)
}

// hostsServiceRole is the groups' own Auto Scaling service-linked role
// (AWSServiceRoleForAutoScaling_<stack name>), defined once for both groups, and lets it use the
// stack's key for the hosts' encrypted volumes, as AWS documents for an Auto Scaling group
// launching volumes encrypted with a customer managed key; without it no instance launches. Only
// the Auto Scaling service can assume that role. A role of the stack's own (not the account's
// default one) exists before the key policy names it, even in an account that never used Auto
// Scaling. (Its construct id and key statement ids say Windows: they predate the Linux hosts,
// and renaming them would replace the role of a deployed stack.)
func (s *KilnStack) hostsServiceRole() *string {
	if s.hostsSLR != nil {
		return s.hostsSLR
	}
	slr := awsiam.NewCfnServiceLinkedRole(s.Stack, jsii.String("WindowsHostsServiceRole"), &awsiam.CfnServiceLinkedRoleProps{
		AwsServiceName: jsii.String("autoscaling.amazonaws.com"),
		CustomSuffix:   awscdk.Aws_STACK_NAME(),
		Description:    jsii.String("kiln Windows build hosts: launches them with volumes encrypted by the stack's key"),
	})
	arn := awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":iam::"), awscdk.Aws_ACCOUNT_ID(),
		jsii.String(":role/aws-service-role/autoscaling.amazonaws.com/"), slr.Ref(),
	})
	s.key.Node().AddDependency(slr)
	principal := awsiam.NewArnPrincipal(arn)
	s.key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("WindowsHostVolumes"),
		Principals: &[]awsiam.IPrincipal{principal},
		Actions:    jsii.Strings("kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"),
		Resources:  jsii.Strings("*"),
	}), nil)
	s.key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("WindowsHostVolumeGrants"),
		Principals: &[]awsiam.IPrincipal{principal},
		Actions:    jsii.Strings("kms:CreateGrant"),
		Resources:  jsii.Strings("*"),
		Conditions: &map[string]any{"Bool": map[string]any{"kms:GrantIsForAWSResource": true}},
	}), nil)
	s.hostsSLR = arn
	return arn
}
