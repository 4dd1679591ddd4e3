package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The metric the Windows hosts scale on (in HostsMetricNamespace): the number of Win64 builds
// waiting for one of kiln's hosted Windows hosts.
const (
	WaitingWin64BuildsNamespace = HostsMetricNamespace
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
	// WindowsLaunchHook and WindowsLaunchHookMinutes: the groups' HostLaunchHook.
	WindowsLaunchHook        = HostLaunchHook
	WindowsLaunchHookMinutes = HostLaunchHookMinutes
	// WindowsHostGroupSuffix follows the stack's name in the group's name.
	WindowsHostGroupSuffix = "-windows-hosts"
)

// DefaultWindowsEgressPorts are the TCP ports the hosts may connect out to: HTTPS only (the API,
// S3 through presigned URLs, git over HTTPS, SSM).
var DefaultWindowsEgressPorts = []int{443}

// createWinHosts defines kiln's hosted Windows build hosts when Props.WindowsAMI is set
// (createHostGroup): their user data starts the AMI's kiln-agent service. Without an AMI it
// defines nothing (the WindowsHostGroup output says so) and Win64 builds wait for a studio's own
// agents.
func (s *KilnStack) createWinHosts() {
	if s.props.WindowsAMI == "" {
		return
	}
	s.winHosts = s.createHostGroup(hostGroupSpec{
		id: "Windows", what: "Windows", suffix: WindowsHostGroupSuffix,
		image: &windowsAMI{id: s.props.WindowsAMI}, instanceType: s.props.WindowsInstanceType,
		rootDevice: "/dev/sda1", // the root volume of Windows AMIs
		rootGiB:    WindowsRootVolumeGiB, warmPool: s.props.WindowsWarmPoolSize, maxHosts: s.props.WindowsMaxHosts,
		egressPorts: s.props.WindowsEgressPorts, metric: WaitingWin64BuildsMetric,
		userData: s.windowsUserData,
	})
}

// windowsUserData runs at every boot (persist): the first, before the instance is stopped into
// the warm pool, and the one taking it out of the pool. It writes the agent's configuration file
// (the AMI's kiln-agent service runs `kiln agent --config WindowsAgentConfigFile`: a machine
// environment variable would reach the running service only after a reboot), starts the
// service, and completes the launch lifecycle action (hostGroupSpec.userData).
func (s *KilnStack) windowsUserData(groupName *string) awsec2.UserData {
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
			jsii.String("' -LifecycleHookName '" + HostLaunchHook + "' -InstanceId $instanceId -LifecycleActionResult CONTINUE -Region '"),
			awscdk.Aws_REGION(), jsii.String("'"),
		}),
	)
	return userData
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
