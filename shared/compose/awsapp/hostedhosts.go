package awsapp

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/settings"
)

// HostedHostsConfig is kiln's own pools of EC2 hosts: Windows hosts for Win64 builds, Linux
// hosts for Linux builds of the engine versions their AMI holds (the CDK stack sets them when
// kiln:windowsAmiId, kiln:linuxAmiId are configured; docs/deploy.md).
type HostedHostsConfig struct {
	// Windows is the Windows hosts' group (KILN_WINDOWS_HOST_GROUP, KILN_WINDOWS_HOST_IDLE);
	// without one a Win64 build needs an organization's agent pool.
	Windows HostGroupConfig
	// Linux is the Linux hosts' group (KILN_LINUX_HOST_GROUP, KILN_LINUX_HOST_IDLE); without
	// one Linux builds run on CodeBuild images.
	Linux HostGroupConfig
	// LinuxEngineVersions are the engine versions the Linux hosts' AMI holds
	// (KILN_LINUX_HOST_ENGINES, comma-separated; required with KILN_LINUX_HOST_GROUP).
	LinuxEngineVersions []string
	// AccountID is the deployment's AWS account (KILN_AWS_ACCOUNT_ID): a host's identity
	// document must name it.
	AccountID string
	// Certificates verify the hosts' instance identity documents (KILN_EC2_IDENTITY_CERTS: PEM,
	// AWS's "RSA" certificate of the deployment's region). Only the API needs them.
	Certificates hostedhosts.Certificates
}

// HostGroupConfig is one hosted pool's Auto Scaling group.
type HostGroupConfig struct {
	// Group is the group's name; empty: the deployment runs no such hosts.
	Group string
	// IdleLimit is how long a host may stay in service without a build while none of its pool
	// waits (default hostedhosts.DefaultIdleLimit).
	IdleLimit time.Duration
}

var awsAccount = regexp.MustCompile(`^[0-9]{12}$`)

// load reads the hosted hosts' settings.
func (w *HostedHostsConfig) load(getenv func(string) string) error {
	w.AccountID = settings.AWSAccountID.Get(getenv)
	if w.AccountID != "" && !awsAccount.MatchString(w.AccountID) {
		return fmt.Errorf("KILN_AWS_ACCOUNT_ID: want a 12-digit AWS account id, not %q", w.AccountID)
	}
	if v := settings.EC2IdentityCerts.Get(getenv); v != "" {
		certs, err := hostedhosts.ParseCertificates(v)
		if err != nil {
			return fmt.Errorf("KILN_EC2_IDENTITY_CERTS: %w", err)
		}
		w.Certificates = certs
	}
	for _, h := range []struct {
		group, idle settings.Row
		g           *HostGroupConfig
	}{{settings.WindowsHostGroup, settings.WindowsHostIdle, &w.Windows}, {settings.LinuxHostGroup, settings.LinuxHostIdle, &w.Linux}} {
		g := h.g
		g.Group, g.IdleLimit = h.group.Get(getenv), hostedhosts.DefaultIdleLimit
		if v := getenv(h.idle.Name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Minute {
				return fmt.Errorf("%s: must be a duration of a minute or more, such as 15m", h.idle.Name)
			}
			g.IdleLimit = d
		}
	}
	w.LinuxEngineVersions = nil
	for _, v := range strings.Split(settings.LinuxHostEngines.Get(getenv), ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if !kiln.ValidUEVersion(v) {
			return fmt.Errorf("KILN_LINUX_HOST_ENGINES: %q is not an engine version (5.4, 5.4.1)", v)
		}
		w.LinuxEngineVersions = append(w.LinuxEngineVersions, v)
	}
	if (w.Linux.Group == "") != (len(w.LinuxEngineVersions) == 0) {
		return errors.New("KILN_LINUX_HOST_GROUP and KILN_LINUX_HOST_ENGINES go together: the Linux hosts' group and the engine versions its AMI holds")
	}
	return nil
}

// pools are the hosted pools the deployment runs, each with its group's settings.
func (w HostedHostsConfig) pools() map[string]HostGroupConfig {
	out := map[string]HostGroupConfig{}
	if w.Windows.Group != "" {
		out[kiln.HostedPoolWin64] = w.Windows
	}
	if w.Linux.Group != "" {
		out[kiln.HostedPoolLinux] = w.Linux
	}
	return out
}

// authenticator is the claim endpoint's check of hosted hosts; nil without hosted hosts. An
// instance in service in a pool's group is an agent of that pool only. The API refuses to start
// with a group but without the account, certificates or client to check hosts by.
func (w HostedHostsConfig) authenticator(clients HostedHostsClients, logger *slog.Logger) (agentapi.HostedAuthenticator, error) {
	pools := w.pools()
	if len(pools) == 0 {
		return nil, nil
	}
	if w.AccountID == "" || len(w.Certificates) == 0 {
		return nil, errors.New("KILN_WINDOWS_HOST_GROUP or KILN_LINUX_HOST_GROUP is set: KILN_AWS_ACCOUNT_ID and KILN_EC2_IDENTITY_CERTS must be too (docs/deploy.md)")
	}
	a := &hostedhosts.Authenticator{Certificates: w.Certificates, AccountID: w.AccountID, Logger: logger}
	for _, pool := range slices.Sorted(maps.Keys(pools)) {
		c := clients.of(pool)
		if c.AutoScaling == nil {
			return nil, fmt.Errorf("hosted pool %s: no Auto Scaling client", pool)
		}
		a.Groups = append(a.Groups, hostedhosts.PoolGroup{Pool: pool, Instances: &hostedhosts.Group{Client: c.AutoScaling, Name: pools[pool].Group}})
	}
	return a, nil
}

// reapers are the schedule's care of each hosted pool's group (none without hosted hosts).
func (w HostedHostsConfig) reapers(p Parts) ([]*hostedhosts.Reaper, error) {
	pools := w.pools()
	var out []*hostedhosts.Reaper
	for _, pool := range slices.Sorted(maps.Keys(pools)) {
		c := p.HostedHosts.of(pool)
		if c.AutoScaling == nil || c.CloudWatch == nil {
			return nil, fmt.Errorf("schedule: the group of hosted pool %s is set but its Auto Scaling and CloudWatch clients are missing", pool)
		}
		out = append(out, &hostedhosts.Reaper{Store: p.Store, Pool: pool, Hosts: &hostedhosts.Group{Client: c.AutoScaling, Name: pools[pool].Group},
			Metrics: &hostedhosts.CloudWatchMetrics{Client: c.CloudWatch, Metric: hostedhosts.WaitingMetric(pool)}, IdleLimit: pools[pool].IdleLimit,
			Logger: p.Logger, Now: p.Now})
	}
	return out, nil
}

// HostedHostsClients are the AWS clients of each hosted pool's group (zero without one). In AWS
// both groups use the same clients; kiln aws-local stands in for each group on its own endpoint.
type HostedHostsClients struct {
	Windows, Linux HostGroupClients
}

// HostGroupClients are the clients one hosted pool's group is driven with.
type HostGroupClients struct {
	AutoScaling hostedhosts.AutoScaling
	CloudWatch  hostedhosts.CloudWatch
}

func (c HostedHostsClients) of(pool string) HostGroupClients {
	switch pool {
	case kiln.HostedPoolWin64:
		return c.Windows
	case kiln.HostedPoolLinux:
		return c.Linux
	}
	return HostGroupClients{}
}

func newHostedHostsClients(awsCfg aws.Config, w HostedHostsConfig) HostedHostsClients {
	var out HostedHostsClients
	if len(w.pools()) == 0 {
		return out
	}
	shared := HostGroupClients{AutoScaling: autoscaling.NewFromConfig(awsCfg), CloudWatch: cloudwatch.NewFromConfig(awsCfg)}
	if w.Windows.Group != "" {
		out.Windows = shared
	}
	if w.Linux.Group != "" {
		out.Linux = shared
	}
	return out
}

// linuxVersions are the engine versions whose Linux builds go to the Linux hosts (none without
// their group).
func (w HostedHostsConfig) linuxVersions() []string {
	if w.Linux.Group == "" {
		return nil
	}
	return w.LinuxEngineVersions
}
