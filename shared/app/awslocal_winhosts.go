package app

import (
	"context"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkautoscaling "github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/kilnbuild/kiln/shared/app/awsapp"
	"github.com/kilnbuild/kiln/shared/awslocal/autoscaling"
	"github.com/kilnbuild/kiln/shared/awslocal/ec2hosts"
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
// WindowsHosts and returns the clients the functions use.
func (l *AWSLocal) startWindowsHosts(cfg Config, o AWSLocalOptions, apiCfg *awsapp.AWSConfig) (awsapp.WindowsHostsClients, error) {
	if len(o.WindowsHostCommand) == 0 {
		return awsapp.WindowsHostsClients{}, nil
	}
	signer, err := imds.NewSigner()
	if err != nil {
		return awsapp.WindowsHostsClients{}, err
	}
	certs, err := hostedhosts.ParseCertificates(signer.CertificatePEM)
	if err != nil {
		return awsapp.WindowsHostsClients{}, err
	}
	group := &autoscaling.Group{Name: awsLocalWindowsGroup}
	groupURL, groupServe, err := l.listen()
	if err != nil {
		return awsapp.WindowsHostsClients{}, err
	}
	groupServe(group)
	apiCfg.WindowsHosts = awsapp.WindowsHostsConfig{Group: awsLocalWindowsGroup, AccountID: awsLocalAccount, Certificates: certs,
		IdleLimit: hostedhosts.DefaultIdleLimit}
	st := l.backend.store
	l.winHost = ec2hosts.New(ec2hosts.Config{Group: group, Signer: signer, Account: awsLocalAccount, Region: awsLocalRegion,
		Command: o.WindowsHostCommand, Dir: filepath.Join(cfg.Data, awsLocalDir, "ec2"), Max: max(cfg.Workers, 1), Logger: l.logger, Lifeline: l.lifeline,
		// The agent reaches the API as a host in AWS does, at its URL; engines as an AMI has them.
		Env: append(hostEnvironment(cfg), "KILN_HOST_URL="+l.url, "KILN_AGENT_ENGINES="+absPath(cfg.Engines)),
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
	return awsapp.WindowsHostsClients{
		AutoScaling: sdkautoscaling.New(sdkautoscaling.Options{BaseEndpoint: aws.String(groupURL), Region: awsLocalRegion,
			Credentials: credentials.NewStaticCredentialsProvider("aws-local", "aws-local", "")}),
		CloudWatch: l.winHost,
	}, nil
}
