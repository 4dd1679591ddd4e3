package awsapp

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/awslocal/imds"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
)

// TestHostedHostsSettings: the hosted pools' settings are read and checked at start, and the
// API refuses to start with a group but nothing to check its hosts by.
func TestHostedHostsSettings(t *testing.T) {
	signer, err := imds.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"KILN_DYNAMODB_TABLE": "kiln", "KILN_MASTER_KEY_SECRET_ARN": "arn:aws:secretsmanager:eu-west-1:1:secret:k"}
	load := func(extra map[string]string) (AWSConfig, error) {
		return LoadAWSConfig(func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return base[k]
		})
	}
	c, err := load(map[string]string{"KILN_WINDOWS_HOST_GROUP": "kiln-Win", "KILN_AWS_ACCOUNT_ID": "123456789012",
		"KILN_EC2_IDENTITY_CERTS": signer.CertificatePEM, "KILN_WINDOWS_HOST_IDLE": "20m"})
	if err != nil || c.HostedHosts.Windows.Group != "kiln-Win" || len(c.HostedHosts.Certificates) != 1 || c.HostedHosts.Windows.IdleLimit != 20*time.Minute ||
		c.HostedHosts.Linux.Group != "" || c.HostedHosts.linuxVersions() != nil {
		t.Fatalf("settings: %+v %v", c.HostedHosts, err)
	}
	if c, err := load(nil); err != nil || c.HostedHosts.Windows.Group != "" || c.HostedHosts.Windows.IdleLimit != hostedhosts.DefaultIdleLimit {
		t.Fatalf("defaults: %+v %v", c.HostedHosts, err)
	}
	c, err = load(map[string]string{"KILN_LINUX_HOST_GROUP": "kiln-Linux", "KILN_LINUX_HOST_ENGINES": "5.4, 5.5.1", "KILN_LINUX_HOST_IDLE": "5m",
		"KILN_AWS_ACCOUNT_ID": "123456789012", "KILN_EC2_IDENTITY_CERTS": signer.CertificatePEM})
	if err != nil || c.HostedHosts.Linux.Group != "kiln-Linux" || c.HostedHosts.Linux.IdleLimit != 5*time.Minute ||
		strings.Join(c.HostedHosts.linuxVersions(), ",") != "5.4,5.5.1" || c.HostedHosts.Windows.Group != "" {
		t.Fatalf("Linux settings: %+v %v", c.HostedHosts, err)
	}
	for name, bad := range map[string]map[string]string{
		"KILN_AWS_ACCOUNT_ID":     {"KILN_AWS_ACCOUNT_ID": "12345"},
		"KILN_EC2_IDENTITY_CERTS": {"KILN_EC2_IDENTITY_CERTS": "not a certificate"},
		"KILN_WINDOWS_HOST_IDLE":  {"KILN_WINDOWS_HOST_IDLE": "10s"},
		"KILN_LINUX_HOST_IDLE":    {"KILN_LINUX_HOST_IDLE": "1h?"},
		"KILN_LINUX_HOST_ENGINES": {"KILN_LINUX_HOST_GROUP": "kiln-Linux"},
		"KILN_LINUX_HOST_GROUP":   {"KILN_LINUX_HOST_ENGINES": "5.4"},
		"5.x":                     {"KILN_LINUX_HOST_GROUP": "kiln-Linux", "KILN_LINUX_HOST_ENGINES": "5.x"},
	} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming it", name, err)
		}
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	noCerts := HostedHostsConfig{Linux: HostGroupConfig{Group: "kiln-Linux"}, AccountID: "123456789012"}
	if _, err := noCerts.authenticator(HostedHostsClients{}, logger); err == nil || !strings.Contains(err.Error(), "KILN_EC2_IDENTITY_CERTS") {
		t.Errorf("a group without certificates: %v", err)
	}
	if a, err := (HostedHostsConfig{}).authenticator(HostedHostsClients{}, logger); a != nil || err != nil {
		t.Errorf("no group: %v %v", a, err)
	}
}
