package awsapp

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
)

// WindowsHostsConfig is kiln's own pool of EC2 Windows hosts (the CDK stack sets it when
// kiln:windowsAmiId is configured; docs/deploy.md).
type WindowsHostsConfig struct {
	// Group is the hosts' Auto Scaling group (KILN_WINDOWS_HOST_GROUP); empty: no hosted
	// Windows hosts, and a Win64 build needs an organization's agent pool.
	Group string
	// AccountID is the deployment's AWS account (KILN_AWS_ACCOUNT_ID): a host's identity
	// document must name it.
	AccountID string
	// Certificates verify the hosts' instance identity documents (KILN_EC2_IDENTITY_CERTS: PEM,
	// AWS's "RSA" certificate of the deployment's region). Only the API needs them.
	Certificates hostedhosts.Certificates
	// IdleLimit is how long a host may stay in service without a build while none waits
	// (KILN_WINDOWS_HOST_IDLE, default hostedhosts.DefaultIdleLimit).
	IdleLimit time.Duration
}

var awsAccount = regexp.MustCompile(`^[0-9]{12}$`)

// load reads the Windows hosts' settings.
func (w *WindowsHostsConfig) load(getenv func(string) string) error {
	w.Group, w.AccountID = getenv("KILN_WINDOWS_HOST_GROUP"), getenv("KILN_AWS_ACCOUNT_ID")
	if w.AccountID != "" && !awsAccount.MatchString(w.AccountID) {
		return fmt.Errorf("KILN_AWS_ACCOUNT_ID: want a 12-digit AWS account id, not %q", w.AccountID)
	}
	if v := getenv("KILN_EC2_IDENTITY_CERTS"); v != "" {
		certs, err := hostedhosts.ParseCertificates(v)
		if err != nil {
			return fmt.Errorf("KILN_EC2_IDENTITY_CERTS: %w", err)
		}
		w.Certificates = certs
	}
	w.IdleLimit = hostedhosts.DefaultIdleLimit
	if v := getenv("KILN_WINDOWS_HOST_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			return errors.New("KILN_WINDOWS_HOST_IDLE: must be a duration of a minute or more, such as 15m")
		}
		w.IdleLimit = d
	}
	return nil
}

// authenticator is the claim endpoint's check of hosted hosts; nil without hosted hosts. The
// API refuses to start with a group but without the account or certificates to check hosts by.
func (w WindowsHostsConfig) authenticator(asg hostedhosts.AutoScaling, logger *slog.Logger) (agentapi.HostedAuthenticator, error) {
	if w.Group == "" {
		return nil, nil
	}
	if w.AccountID == "" || len(w.Certificates) == 0 || asg == nil {
		return nil, errors.New("KILN_WINDOWS_HOST_GROUP is set: KILN_AWS_ACCOUNT_ID and KILN_EC2_IDENTITY_CERTS must be too (docs/deploy.md)")
	}
	return &hostedhosts.Authenticator{Certificates: w.Certificates, AccountID: w.AccountID,
		Instances: &hostedhosts.Group{Client: asg, Name: w.Group}, Logger: logger}, nil
}

// WindowsHostsClients are the AWS clients the hosted Windows pool uses (nil without one).
type WindowsHostsClients struct {
	AutoScaling hostedhosts.AutoScaling
	CloudWatch  hostedhosts.CloudWatch
}

func newWindowsHostsClients(awsCfg aws.Config, w WindowsHostsConfig) WindowsHostsClients {
	if w.Group == "" {
		return WindowsHostsClients{}
	}
	return WindowsHostsClients{AutoScaling: autoscaling.NewFromConfig(awsCfg), CloudWatch: cloudwatch.NewFromConfig(awsCfg)}
}
