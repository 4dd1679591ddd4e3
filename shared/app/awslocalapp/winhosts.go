package awslocalapp

import (
	"context"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkautoscaling "github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/kilnbuild/kiln/shared/app/awsapp"
	"github.com/kilnbuild/kiln/shared/awslocal/autoscaling"
	"github.com/kilnbuild/kiln/shared/awslocal/ec2hosts"
	"github.com/kilnbuild/kiln/shared/awslocal/iam"
	"github.com/kilnbuild/kiln/shared/awslocal/imds"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// awsLocalWindowsGroup is the Auto Scaling group stand-in of the hosted Windows hosts.
const awsLocalWindowsGroup = "kiln-windows-hosts"

// startWindowsHosts stands in for the hosted Windows hosts when o.WindowsHostCommand is set: an
// identity signing key made now, whose certificate the API trusts in place of AWS's; the Auto
// Scaling group stand-in on its loopback port, behind the real SDK client; and the scaling
// policy launching `kiln agent --ec2-host` instances, each with its own metadata service, as
// the schedule's metric says builds wait (at most KILN_WORKERS at once). It sets apiCfg's
// WindowsHosts and returns the clients a function (by its principal) uses: its calls are checked
// against its role.
func (l *AWSLocal) startWindowsHosts(cfg Settings, o Options, apiCfg *awsapp.AWSConfig) (func(principal string) awsapp.WindowsHostsClients, error) {
	none := func(string) awsapp.WindowsHostsClients { return awsapp.WindowsHostsClients{} }
	if len(o.WindowsHostCommand) == 0 {
		return none, nil
	}
	if l.iam.auth.Principal(awsLocalKey(iam.EC2HostPrincipal)) == nil {
		l.logger.Info("aws-local: the stack's template has no Windows hosts (kiln:windowsAmiId); a Win64 build needs an agent pool")
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
	group := &autoscaling.Group{Name: awsLocalWindowsGroup}
	groupURL, groupServe, err := l.listen()
	if err != nil {
		return none, err
	}
	groupServe(&iam.Guard{Auth: l.iam.auth, Service: iam.AutoScaling{ARNs: awsLocalARNs, Group: awsLocalWindowsGroup}, Next: l.iam.meter.Free("autoscaling", l.iam.meter.who, group), Logger: l.logger})
	apiCfg.WindowsHosts = awsapp.WindowsHostsConfig{Group: awsLocalWindowsGroup, AccountID: awsLocalAccount, Certificates: certs,
		IdleLimit: hostedhosts.DefaultIdleLimit}
	st := l.backend.store
	l.winHost = ec2hosts.New(ec2hosts.Config{Group: group, Signer: signer, Account: awsLocalAccount, Region: Region,
		Command: o.WindowsHostCommand, Dir: filepath.Join(cfg.Data, awsLocalDir, "ec2"), Max: max(cfg.Workers, 1), Logger: l.logger, Lifeline: l.lifeline,
		// The agent reaches the API as a host in AWS does, at its URL; engines as an AMI has them.
		Env: append(append(hostEnvironment(cfg), "KILN_HOST_URL="+l.url, "KILN_AGENT_ENGINES="+absPath(cfg.Engines)),
			l.iam.hostAWSEnv(iam.EC2HostPrincipal, map[string]string{"AUTO_SCALING": groupURL})...),
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
	return func(principal string) awsapp.WindowsHostsClients {
		return awsapp.WindowsHostsClients{
			AutoScaling: sdkautoscaling.New(sdkautoscaling.Options{BaseEndpoint: aws.String(groupURL), Region: Region,
				Credentials: credentialsOf(principal)}),
			CloudWatch: checkedCloudWatch{next: l.winHost, auth: l.iam.auth, principal: principal, meter: l.iam.meter},
		}
	}, nil
}
