package stack

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The metric the Linux hosts scale on (in HostsMetricNamespace): the number of Linux builds
// waiting for one of kiln's hosted Linux hosts.
const WaitingLinuxBuildsMetric = "WaitingLinuxBuilds"

// Defaults and fixed settings of the Linux hosts.
const (
	DefaultLinuxInstanceType = "c6i.8xlarge" // 32 vCPUs, 64 GiB: a UE Linux cook and package
	DefaultLinuxWarmPoolSize = 2
	DefaultLinuxMaxHosts     = 10
	// LinuxRootVolumeGiB is the hosts' root volume: the engines of the AMI plus a project's
	// checkout, intermediates and package.
	LinuxRootVolumeGiB = 500
	// LinuxRootDevice is the root device of the AMI (Amazon Linux's; docs/deploy.md).
	LinuxRootDevice = "/dev/xvda"
	// LinuxAgentUser is the AMI's user the agent runs as: never root (Unreal refuses to run as
	// root, and a tenant's build gets no more than that user).
	LinuxAgentUser = "kiln"
	// LinuxAgentBinary and LinuxEnginesDir are where the AMI holds kiln and its engines
	// (<dir>/<version>/Engine/Build/BatchFiles/RunUAT.sh).
	LinuxAgentBinary = "/usr/local/bin/kiln"
	LinuxEnginesDir  = "/opt/kiln/engines"
	// LinuxAgentConfigFile is the agent's environment file, which the user data writes and the
	// kiln-agent systemd unit reads; LinuxAgentUnit is that unit.
	LinuxAgentConfigFile = "/etc/kiln/agent.env"
	LinuxAgentUnit       = "kiln-agent.service"
	// LinuxHostReadyScript completes the launch lifecycle action at every boot (cloud-init runs
	// its per-boot scripts at each start, the user data itself only at the first).
	LinuxHostReadyScript = "/var/lib/cloud/scripts/per-boot/kiln-host-ready.sh"
	// LinuxHostGroupSuffix follows the stack's name in the group's name.
	LinuxHostGroupSuffix = "-linux-hosts"
)

// DefaultLinuxEgressPorts are the TCP ports the Linux hosts may connect out to: HTTPS only.
var DefaultLinuxEgressPorts = []int{443}

// createLinuxHosts defines kiln's hosted Linux build hosts when Props.LinuxAMI is set
// (createHostGroup): a Linux build of one of Props.LinuxEngineVersions then runs on one of them,
// from the warm pool with the engine on its volume, instead of on CodeBuild pulling the engine
// image. Without an AMI it defines nothing (the LinuxHostGroup output says so).
func (s *KilnStack) createLinuxHosts() {
	if s.props.LinuxAMI == "" {
		return
	}
	s.linuxHosts = s.createHostGroup(hostGroupSpec{
		id: "Linux", what: "Linux", suffix: LinuxHostGroupSuffix,
		image: &linuxAMI{id: s.props.LinuxAMI}, instanceType: s.props.LinuxInstanceType,
		rootDevice: LinuxRootDevice, rootGiB: LinuxRootVolumeGiB,
		warmPool: s.props.LinuxWarmPoolSize, maxHosts: s.props.LinuxMaxHosts,
		egressPorts: s.props.LinuxEgressPorts, metric: WaitingLinuxBuildsMetric,
		userData: s.linuxUserData,
	})
}

// linuxUserData runs at the first boot (before the instance is stopped into the warm pool): it
// writes the agent's environment file and a systemd unit running `kiln agent` as LinuxAgentUser
// (enabled: it starts again at every boot, so also when the instance leaves the pool), starts
// it, and installs and runs the per-boot script completing the launch lifecycle action.
func (s *KilnStack) linuxUserData(groupName *string) awsec2.UserData {
	userData := awsec2.UserData_ForLinux(&awsec2.LinuxUserDataOptions{Shebang: jsii.String("#!/bin/bash")})
	unit := strings.Join([]string{
		"[Unit]",
		"Description=kiln agent: claims and runs one build of kiln's hosted Linux pool",
		"Wants=network-online.target",
		"After=network-online.target",
		"[Service]",
		"User=" + LinuxAgentUser,
		"Group=" + LinuxAgentUser,
		"EnvironmentFile=" + LinuxAgentConfigFile,
		"ExecStart=" + LinuxAgentBinary + " agent --ec2-host",
		"Restart=no",
		"[Install]",
		"WantedBy=multi-user.target",
	}, "\n")
	ready := strings.Join([]string{
		"#!/bin/bash",
		"set -euo pipefail",
		"token=$(curl -sf -X PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 300')",
		`instance=$(curl -sf -H "X-aws-ec2-metadata-token: $token" http://169.254.169.254/latest/meta-data/instance-id)`,
	}, "\n")
	userData.AddCommands(
		jsii.String("set -euo pipefail"),
		jsii.String("install -d -m 0755 /etc/kiln"),
		awscdk.Fn_Join(jsii.String(""), &[]*string{
			jsii.String("printf '%s\\n' 'KILN_AGENT_EC2=1' 'KILN_AGENT_PLATFORMS=Linux' 'KILN_AGENT_ENGINES=" + LinuxEnginesDir + "' 'KILN_HOST_URL="),
			s.publicURL(), jsii.String("' > " + LinuxAgentConfigFile),
		}),
		jsii.String("chmod 0644 "+LinuxAgentConfigFile),
		jsii.String("cat > /etc/systemd/system/"+LinuxAgentUnit+" <<'UNIT'\n"+unit+"\nUNIT"),
		jsii.String("systemctl daemon-reload"),
		jsii.String("systemctl enable --now "+LinuxAgentUnit),
		jsii.String("install -d -m 0755 "+LinuxHostReadyScript[:strings.LastIndex(LinuxHostReadyScript, "/")]),
		awscdk.Fn_Join(jsii.String(""), &[]*string{
			jsii.String("cat > " + LinuxHostReadyScript + " <<'READY'\n" + ready + "\naws autoscaling complete-lifecycle-action --auto-scaling-group-name '"),
			groupName,
			jsii.String("' --lifecycle-hook-name '" + HostLaunchHook + "' --instance-id \"$instance\" --lifecycle-action-result CONTINUE --region '"),
			awscdk.Aws_REGION(), jsii.String("'\nREADY"),
		}),
		jsii.String("chmod 0755 "+LinuxHostReadyScript),
		jsii.String(LinuxHostReadyScript),
	)
	return userData
}

// linuxAMI is an AMI given by its id.
type linuxAMI struct{ id string }

func (a *linuxAMI) GetImage(constructs.Construct) *awsec2.MachineImageConfig {
	return &awsec2.MachineImageConfig{
		ImageId:  jsii.String(a.id),
		OsType:   awsec2.OperatingSystemType_LINUX,
		UserData: awsec2.UserData_ForLinux(nil),
	}
}

// linuxHostsOutput is the LinuxHostGroup output: the group's name, or why there is none.
func (s *KilnStack) linuxHostsOutput() *string {
	if s.linuxHosts == nil {
		return jsii.String("none: " + ContextLinuxAMI + " is not set")
	}
	return s.linuxHosts.group.AutoScalingGroupName()
}
