package awslocalapp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkautoscaling "github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/kilnbuild/kiln/shared/awslocal/autoscaling"
	"github.com/kilnbuild/kiln/shared/awslocal/ec2hosts"
	"github.com/kilnbuild/kiln/shared/awslocal/iam"
	"github.com/kilnbuild/kiln/shared/awslocal/imds"
	"github.com/kilnbuild/kiln/shared/compose/awsapp"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// The Auto Scaling group stand-ins of the hosted Windows and Linux hosts.
const (
	awsLocalWindowsGroup = "kiln-windows-hosts"
	awsLocalLinuxGroup   = "kiln-linux-hosts"
)

// linuxHostUser is the user the Linux hosts' agent runs as (the stack's LinuxAgentUser): here a
// uid of KILN_BUILD_UIDS when aws-local runs as root.
const linuxHostUser = "kiln"

// hostGroupClients are the clients a function (by its principal) drives the host groups with.
type hostGroupClients func(principal string) awsapp.HostedHostsClients

// startHostedHosts stands in for the hosted host groups the stack's template has (its Windows
// and Linux hosts' instance roles) when o.EC2HostCommand is set: an identity signing key made
// now, whose certificate the API trusts in place of AWS's; per group, the Auto Scaling group
// stand-in on its loopback port, behind the real SDK client, and the scaling policy launching
// `kiln agent --ec2-host` instances, each with its own metadata service, as the schedule's
// metric of the group's pool says builds wait (at most KILN_WORKERS at once). The Linux hosts'
// agents run as a uid of KILN_BUILD_UIDS (never root), for the engine versions the template's
// functions are told (KILN_LINUX_HOST_ENGINES). It sets apiCfg's HostedHosts and returns the
// clients a function uses: its calls are checked against its role.
func (l *AWSLocal) startHostedHosts(cfg Settings, o Options, templatePath string, apiCfg *awsapp.AWSConfig) (hostGroupClients, error) {
	none := func(string) awsapp.HostedHostsClients { return awsapp.HostedHostsClients{} }
	if len(o.EC2HostCommand) == 0 {
		return none, nil
	}
	windows := l.iam.auth.Principal(awsLocalKey(iam.EC2HostPrincipal)) != nil
	linux := l.iam.auth.Principal(awsLocalKey(iam.EC2LinuxHostPrincipal)) != nil
	if !windows {
		l.logger.Info("aws-local: the stack's template has no Windows hosts (kiln:windowsAmiId); a Win64 build needs an agent pool")
	}
	if !linux {
		l.logger.Info("aws-local: the stack's template has no Linux hosts (kiln:linuxAmiId); Linux builds run on the CodeBuild stand-in")
	}
	if !windows && !linux {
		return none, nil
	}
	signer, err := imds.NewSigner()
	if err != nil {
		return none, err
	}
	certs, err := hostedhosts.ParseCertificates(signer.CertificatePEM)
	if err != nil {
		return none, err
	}
	apiCfg.HostedHosts = awsapp.HostedHostsConfig{AccountID: awsLocalAccount, Certificates: certs}
	var winClients, linuxClients func(string) awsapp.HostGroupClients
	if windows {
		apiCfg.HostedHosts.Windows = awsapp.HostGroupConfig{Group: awsLocalWindowsGroup, IdleLimit: hostedhosts.DefaultIdleLimit}
		l.winHost, winClients, err = l.startHostGroup(cfg, o, signer, hostGroupStandIn{what: "Windows", group: awsLocalWindowsGroup,
			pool: kiln.HostedPoolWin64, principal: iam.EC2HostPrincipal, platform: kiln.PlatformWin64})
		if err != nil {
			return none, err
		}
	}
	if linux {
		versions, err := linuxHostEngines(templatePath)
		if err != nil {
			return none, err
		}
		apiCfg.HostedHosts.Linux = awsapp.HostGroupConfig{Group: awsLocalLinuxGroup, IdleLimit: hostedhosts.DefaultIdleLimit}
		apiCfg.HostedHosts.LinuxEngineVersions = versions
		runAs := &ec2hosts.RunAs{User: linuxHostUser, Take: cfg.BuildUIDs.Take}
		if os.Geteuid() == 0 {
			for _, p := range hostReadable(cfg, o.EC2HostCommand[0]) {
				if err := othersCanRead(p); err != nil {
					return none, fmt.Errorf("aws-local: the Linux hosts' agents run as a uid of KILN_BUILD_UIDS, which cannot read %s: %w; "+
						"make it readable by others (o+r, and o+x on its directories)", p, err)
				}
			}
		}
		l.linuxHost, linuxClients, err = l.startHostGroup(cfg, o, signer, hostGroupStandIn{what: "Linux", group: awsLocalLinuxGroup,
			pool: kiln.HostedPoolLinux, principal: iam.EC2LinuxHostPrincipal, platform: kiln.PlatformLinux, runAs: runAs})
		if err != nil {
			return none, err
		}
	}
	return func(principal string) awsapp.HostedHostsClients {
		var c awsapp.HostedHostsClients
		if winClients != nil {
			c.Windows = winClients(principal)
		}
		if linuxClients != nil {
			c.Linux = linuxClients(principal)
		}
		return c
	}, nil
}

// hostGroupStandIn is one host group aws-local stands in for.
type hostGroupStandIn struct {
	what, group, pool string
	principal         string // the hosts' instance role
	platform          kiln.Platform
	runAs             *ec2hosts.RunAs
}

// startHostGroup starts one group's stand-ins: the Auto Scaling group behind its IAM check and
// the scaling policy with its instances.
func (l *AWSLocal) startHostGroup(cfg Settings, o Options, signer *imds.Signer, g hostGroupStandIn) (*ec2hosts.Pool, func(string) awsapp.HostGroupClients, error) {
	group := &autoscaling.Group{Name: g.group}
	groupURL, groupServe, err := l.listen()
	if err != nil {
		return nil, nil, err
	}
	groupServe(&iam.Guard{Auth: l.iam.auth, Service: iam.AutoScaling{ARNs: awsLocalARNs, Group: g.group}, Next: l.iam.meter.Free("autoscaling", l.iam.meter.who, group), Logger: l.logger})
	st := l.backend.store
	pool := ec2hosts.New(ec2hosts.Config{What: g.what, Metric: hostedhosts.WaitingMetric(g.pool), Group: group, Signer: signer,
		Account: awsLocalAccount, Region: Region, RunAs: g.runAs,
		Command: o.EC2HostCommand, Dir: filepath.Join(cfg.Data, awsLocalDir, "ec2-"+strings.ToLower(g.what)), Max: max(cfg.Workers, 1), Logger: l.logger, Lifeline: l.lifeline,
		// The agent reaches the API as a host in AWS does, at its URL; engines as an AMI has
		// them; the platform as the launch template's user data (or the Windows AMI) sets it.
		Env: append(append(hostEnvironment(cfg), "KILN_HOST_URL="+l.url, "KILN_AGENT_ENGINES="+absPath(cfg.Engines), "KILN_AGENT_PLATFORMS="+string(g.platform)),
			l.iam.hostAWSEnv(g.principal, map[string]string{"AUTO_SCALING": groupURL})...),
		Claimed: func(ctx context.Context, id string) (bool, error) {
			h, err := st.GetHostedHost(ctx, id)
			if kiln.IsCode(err, kiln.ENotFound) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return h.Claimed(), nil
		}})
	return pool, func(principal string) awsapp.HostGroupClients {
		return awsapp.HostGroupClients{
			AutoScaling: sdkautoscaling.New(sdkautoscaling.Options{BaseEndpoint: aws.String(groupURL), Region: Region,
				Credentials: credentialsOf(principal)}),
			CloudWatch: checkedCloudWatch{next: pool, auth: l.iam.auth, principal: principal, meter: l.iam.meter, logger: l.logger},
		}
	}, nil
}

// linuxHostEngines are the engine versions the template tells its functions the Linux hosts
// provide (KILN_LINUX_HOST_ENGINES of a function's environment).
func linuxHostEngines(templatePath string) ([]string, error) {
	data, err := os.ReadFile(templatePath)
	if err != nil {
		return nil, fmt.Errorf("aws-local: the Linux hosts' engines: %w", err)
	}
	var tpl struct {
		Resources map[string]struct {
			Type       string
			Properties struct {
				Environment struct{ Variables map[string]any }
			}
		}
	}
	if err := json.Unmarshal(data, &tpl); err != nil {
		return nil, fmt.Errorf("aws-local: the Linux hosts' engines: %s: %w", templatePath, err)
	}
	for _, r := range tpl.Resources {
		if v, ok := r.Properties.Environment.Variables["KILN_LINUX_HOST_ENGINES"].(string); ok && r.Type == "AWS::Lambda::Function" && v != "" {
			return strings.Split(v, ","), nil
		}
	}
	return nil, fmt.Errorf("aws-local: %s has Linux hosts but no function is told their engine versions (KILN_LINUX_HOST_ENGINES)", templatePath)
}
