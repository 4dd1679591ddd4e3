package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsautoscaling"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The metric the Windows hosts scale on: the number of Win64 builds waiting for one of kiln's
// hosted Windows hosts. The service publishes it (docs/deploy.md); the scaling policy adds hosts
// while it is 1 or more.
const (
	WaitingWin64BuildsNamespace = "kiln"
	WaitingWin64BuildsMetric    = "WaitingWin64Builds"
)

// Defaults of the Windows hosts' settings.
const (
	DefaultWindowsInstanceType = "c6i.8xlarge" // 32 vCPUs, 64 GiB: a UE Win64 cook and package
	DefaultWindowsWarmPoolSize = 2
	DefaultWindowsMaxHosts     = 10
	// WindowsRootVolumeGiB is the hosts' root volume: the engine of the AMI plus a project's
	// checkout, intermediates and package.
	WindowsRootVolumeGiB = 500
	// WindowsAgentService is the Windows service the AMI installs to run `kiln agent`.
	WindowsAgentService = "kiln-agent"
	// WindowsAgentConfigFile is the agent's configuration file on the hosts: the user data
	// writes it, the AMI's service reads it (`kiln agent --config`).
	WindowsAgentConfigFile = windowsAgentConfigDir + `\agent.conf`
	windowsAgentConfigDir  = `C:\ProgramData\kiln`
	// WindowsLaunchHook is the group's launch lifecycle hook the user data completes.
	WindowsLaunchHook = "kiln-host-ready"
	// WindowsLaunchHookMinutes is how long an instance may take to run its user data before it
	// is abandoned.
	WindowsLaunchHookMinutes = 20
	// WindowsHostGroupSuffix follows the stack's name in the group's name.
	WindowsHostGroupSuffix = "-windows-hosts"
)

// DefaultWindowsEgressPorts are the TCP ports the hosts may connect out to: HTTPS only (the API,
// S3 through presigned URLs, git over HTTPS, SSM).
var DefaultWindowsEgressPorts = []int{443}

// winHosts is what createWinHosts defines (nil without kiln:windowsAmiId).
type winHosts struct {
	group awsautoscaling.AutoScalingGroup
	role  awsiam.Role
}

// createWinHosts defines kiln's hosted Windows build hosts when Props.WindowsAMI is set: a
// launch template, an Auto Scaling group of at most WindowsMaxHosts, with a warm pool of stopped
// instances, scaled out on WaitingWin64Builds. Without an AMI it defines nothing (the
// WindowsHostGroup output says so) and Win64 builds wait for a studio's own agents.
//
// A host runs one build and is gone: every build starts on an instance no other build ran on.
// Once its build ended, the schedule function terminates the instance and lowers the group's
// desired capacity (allowWinHostsControl); the next build gets a fresh instance from the warm
// pool, prepared from the AMI and never used. Instances are never returned to the pool on
// scale-in (ReuseOnScaleIn false) and the root volume is deleted with its instance, so no state
// of one organization's build survives into another's. New instances are protected from scale-in:
// the group never terminates a host in the middle of a build.
func (s *KilnStack) createWinHosts() {
	if s.props.WindowsAMI == "" {
		return
	}
	// A VPC of public subnets only: the hosts reach the API, S3 and SSM over the internet (no NAT
	// gateway to pay for) and accept no connection (their security group has no inbound rule).
	vpc := awsec2.NewVpc(s.Stack, jsii.String("WindowsHostsVpc"), &awsec2.VpcProps{
		MaxAzs:      jsii.Number(2),
		NatGateways: jsii.Number(0),
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
			{Name: jsii.String("Public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(20)},
		},
		// The default security group is unused; restricting it takes a custom resource (a
		// Lambda): the hosts use their own group below.
		RestrictDefaultSecurityGroup: jsii.Bool(false),
	})
	sg := awsec2.NewSecurityGroup(s.Stack, jsii.String("WindowsHostsSecurityGroup"), &awsec2.SecurityGroupProps{
		Vpc:              vpc,
		Description:      jsii.String("kiln Windows build hosts: no inbound, outbound HTTPS only"),
		AllowAllOutbound: jsii.Bool(false),
	})
	for _, port := range s.props.WindowsEgressPorts {
		sg.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(float64(port))), jsii.String(fmt.Sprintf("out to TCP %d", port)), jsii.Bool(false))
	}

	// The instance role: Session Manager and nothing else. A build is a tenant's code and runs
	// on the instance, so it can read the role's credentials from the metadata service: the role
	// reaches no table, bucket, secret, key or queue. The agent talks to the API over HTTPS with
	// its own per-host credential.
	role := awsiam.NewRole(s.Stack, jsii.String("WindowsHostRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("ec2.amazonaws.com"), nil),
		Description: jsii.String("kiln Windows build hosts: SSM Session Manager only"),
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
	groupName := awscdk.Fn_Join(jsii.String(""), &[]*string{awscdk.Aws_STACK_NAME(), jsii.String(WindowsHostGroupSuffix)})

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

	// User data runs at every boot (persist): the first, before the instance is stopped into the
	// warm pool, and the one taking it out of the pool. It writes the agent's configuration file
	// (the AMI's kiln-agent service runs `kiln agent --config WindowsAgentConfigFile`: a machine
	// environment variable would reach the running service only after a reboot), starts the
	// service, and completes the launch lifecycle action. The agent (`kiln agent --ec2-host`,
	// from the AMI) then:
	//   - waits until the instance is in service (IMDSv2 autoscaling/target-lifecycle-state is
	//     InService): an instance warming up for the pool claims nothing;
	//   - claims one Win64 build of kiln's hosted pool by presenting the instance identity
	//     document and signature IMDS serves (no service secret is ever stored on the host or in
	//     the AMI); the API verifies them and records the instance's one claim, ever, and hands
	//     it the build's own host credential;
	//   - runs it (checkout, RunUAT, package, upload, logs, heartbeats) and claims nothing more;
	//   - is then terminated by the schedule function, as is a host that stayed in service
	//     without a build for the idle limit (KILN_WINDOWS_HOST_IDLE) while none waits.
	//     A Windows shutdown from the host terminates it too (the shutdown behaviour below): the
	//     build's volume is gone either way.
	userData := awsec2.UserData_ForWindows(&awsec2.WindowsUserDataOptions{Persist: jsii.Bool(true)})
	userData.AddCommands(
		jsii.String("$ErrorActionPreference = 'Stop'"),
		jsii.String("New-Item -ItemType Directory -Force -Path '"+windowsAgentConfigDir+"' | Out-Null"),
		awscdk.Fn_Join(jsii.String(""), &[]*string{
			jsii.String("Set-Content -Path '" + WindowsAgentConfigFile + "' -Encoding ASCII -Value @('KILN_AGENT_EC2=1', 'KILN_HOST_URL="),
			s.publicURL(), jsii.String("')"),
		}),
		jsii.String("Set-Service -Name "+WindowsAgentService+" -StartupType Automatic"),
		jsii.String("Start-Service -Name "+WindowsAgentService),
		jsii.String("$imdsToken = Invoke-RestMethod -Method Put -Uri 'http://169.254.169.254/latest/api/token' -Headers @{'X-aws-ec2-metadata-token-ttl-seconds' = '300'}"),
		jsii.String("$instanceId = Invoke-RestMethod -Uri 'http://169.254.169.254/latest/meta-data/instance-id' -Headers @{'X-aws-ec2-metadata-token' = $imdsToken}"),
		awscdk.Fn_Join(jsii.String(""), &[]*string{
			jsii.String("Complete-ASLifecycleAction -AutoScalingGroupName '"), groupName,
			jsii.String("' -LifecycleHookName '" + WindowsLaunchHook + "' -InstanceId $instanceId -LifecycleActionResult CONTINUE -Region '"),
			awscdk.Aws_REGION(), jsii.String("'"),
		}),
	)
	lt := awsec2.NewLaunchTemplate(s.Stack, jsii.String("WindowsHostTemplate"), &awsec2.LaunchTemplateProps{
		MachineImage: &windowsAMI{id: s.props.WindowsAMI},
		InstanceType: awsec2.NewInstanceType(jsii.String(s.props.WindowsInstanceType)),
		UserData:     userData,
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
			DeviceName: jsii.String("/dev/sda1"), // the root volume of Windows AMIs
			Volume: awsec2.BlockDeviceVolume_Ebs(jsii.Number(WindowsRootVolumeGiB), &awsec2.EbsDeviceOptions{
				VolumeType:          awsec2.EbsDeviceVolumeType_GP3,
				Encrypted:           jsii.Bool(true),
				KmsKey:              s.key,
				DeleteOnTermination: jsii.Bool(true),
			}),
		}},
	})

	slr := s.windowsHostsServiceRole()
	group := awsautoscaling.NewAutoScalingGroup(s.Stack, jsii.String("WindowsHosts"), &awsautoscaling.AutoScalingGroupProps{
		AutoScalingGroupName:             groupName,
		Vpc:                              vpc,
		VpcSubnets:                       &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PUBLIC},
		LaunchTemplate:                   lt,
		MinCapacity:                      jsii.Number(0),
		MaxCapacity:                      jsii.Number(float64(s.props.WindowsMaxHosts)),
		NewInstancesProtectedFromScaleIn: jsii.Bool(true),
	})
	group.Node().DefaultChild().(awsautoscaling.CfnAutoScalingGroup).SetServiceLinkedRoleArn(slr)
	group.AddLifecycleHook(jsii.String("HostReady"), &awsautoscaling.BasicLifecycleHookProps{
		LifecycleHookName:   jsii.String(WindowsLaunchHook),
		LifecycleTransition: awsautoscaling.LifecycleTransition_INSTANCE_LAUNCHING,
		DefaultResult:       awsautoscaling.DefaultResult_ABANDON,
		HeartbeatTimeout:    awscdk.Duration_Minutes(jsii.Number(WindowsLaunchHookMinutes)),
	})
	// Stopped, prepared instances (first boot done, the AMI's volume initialized): one starts
	// in a minute or two instead of a fresh Windows launch. MaxGroupPreparedCapacity = MinSize
	// keeps the pool at its size whatever the group's capacity.
	group.AddWarmPool(&awsautoscaling.WarmPoolOptions{
		MinSize:                  jsii.Number(float64(s.props.WindowsWarmPoolSize)),
		MaxGroupPreparedCapacity: jsii.Number(float64(s.props.WindowsWarmPoolSize)),
		PoolState:                awsautoscaling.PoolState_STOPPED,
		ReuseOnScaleIn:           jsii.Bool(false),
	})
	// Scale out on the builds waiting: one more host per waiting build, up to three at once
	// below ten waiting, ten at once above. The policy counts the hosts still starting
	// (EstimatedInstanceWarmup) so it does not add them twice.
	group.ScaleOnMetric(jsii.String("ScaleOnWaitingBuilds"), &awsautoscaling.BasicStepScalingPolicyProps{
		Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace:  jsii.String(WaitingWin64BuildsNamespace),
			MetricName: jsii.String(WaitingWin64BuildsMetric),
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
	s.winHosts = &winHosts{group: group, role: role}
}

// allowWinHostsControl lets the schedule function drive the Windows hosts on its tick: publish
// WaitingWin64Builds (PutMetricData has no resource type in IAM: "*", limited to the namespace by
// its condition key) and end a host whose build ended or that stayed idle, decrementing the
// group's desired capacity (TerminateInstanceInAutoScalingGroup on this group only). A host
// leaving by itself would make the group launch a replacement: its desired capacity would stay.
//
// DescribeAutoScalingInstances (which hosts are in service) has no resource type in IAM: "*".
func (s *KilnStack) allowWinHostsControl(f *function) {
	if s.winHosts == nil {
		return
	}
	f.allow([]string{"autoscaling:TerminateInstanceInAutoScalingGroup"}, s.winHosts.group.AutoScalingGroupArn())
	f.allow([]string{"autoscaling:DescribeAutoScalingInstances"}, jsii.String("*"))
	f.role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings("cloudwatch:PutMetricData"),
		Resources:  jsii.Strings("*"),
		Conditions: &map[string]any{"StringEquals": map[string]any{"cloudwatch:namespace": WaitingWin64BuildsNamespace}},
	}))
}

// allowWinHostsClaims lets the API function tell a claim of one of the Windows hosts: the host
// presents its instance identity document, which the API verifies with AWS's certificate for
// the region (KILN_EC2_IDENTITY_CERTS), checks against the account (KILN_AWS_ACCOUNT_ID) and,
// with DescribeAutoScalingInstances (no resource type in IAM: "*"), against the group's
// instances in service. Only the API function gets the certificate, which other functions
// would carry for nothing in their 4 KB of environment.
func (s *KilnStack) allowWinHostsClaims(f *function) {
	if s.winHosts == nil {
		return
	}
	f.allow([]string{"autoscaling:DescribeAutoScalingInstances"}, jsii.String("*"))
	f.fn.AddEnvironment(jsii.String("KILN_EC2_IDENTITY_CERTS"), jsii.String(s.props.WindowsIdentityCertificates), nil)
}

// windowsHostsServiceRole defines the group's own Auto Scaling service-linked role
// (AWSServiceRoleForAutoScaling_<stack name>) and lets it use the stack's key for the hosts'
// encrypted volumes, as AWS documents for an Auto Scaling group launching volumes encrypted with a
// customer managed key; without it no instance launches. Only the Auto Scaling service can assume
// that role. A role of the stack's own (not the account's default one) exists before the key
// policy names it, even in an account that never used Auto Scaling.
func (s *KilnStack) windowsHostsServiceRole() *string {
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
	return arn
}

// windowsAMI is an AMI given by its id (awsec2.MachineImage's helpers want one id per region or a
// lookup at synth).
type windowsAMI struct{ id string }

func (a *windowsAMI) GetImage(constructs.Construct) *awsec2.MachineImageConfig {
	return &awsec2.MachineImageConfig{
		ImageId:  jsii.String(a.id),
		OsType:   awsec2.OperatingSystemType_WINDOWS,
		UserData: awsec2.UserData_ForWindows(nil),
	}
}

// windowsHostsOutput is the WindowsHostGroup output: the group's name, or why there is none.
func (s *KilnStack) windowsHostsOutput() *string {
	if s.winHosts == nil {
		return jsii.String("none: " + ContextWindowsAMI + " is not set")
	}
	return s.winHosts.group.AutoScalingGroupName()
}
