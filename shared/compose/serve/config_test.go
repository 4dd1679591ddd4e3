package serve

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/sandbox"
)

func TestLoadConfigDefaults(t *testing.T) {
	c, err := LoadConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.Data != "./.kiln" || c.PublicURL != "http://127.0.0.1:8080" ||
		c.Engines != "./engines" || c.Workers != 1 || c.GitHubAPIURL != "https://api.github.com/" ||
		c.GitHubWebURL != "https://github.com/" || c.P4 != "p4" || c.DeliveryAttempts != 5 ||
		c.DeliveryBackoff != 2*time.Second || len(c.OutboundAllow) != 0 {
		t.Fatalf("defaults: %+v", c)
	}
	if c.SandboxNetwork != sandbox.NetworkNone || c.BuildUIDs != sandbox.DefaultUIDs {
		t.Fatalf("sandbox defaults: network %q, build uids %v", c.SandboxNetwork, c.BuildUIDs)
	}
}

func TestSandboxNetworkSpellings(t *testing.T) {
	for v, want := range map[string]sandbox.Network{"none": sandbox.NetworkNone, "off": sandbox.NetworkNone, "host": sandbox.NetworkHost, "on": sandbox.NetworkHost} {
		c, err := LoadConfig(nil, func(k string) string {
			if k == "KILN_SANDBOX_NETWORK" {
				return v
			}
			return ""
		}, io.Discard)
		if err != nil || c.SandboxNetwork != want {
			t.Errorf("KILN_SANDBOX_NETWORK=%s: %q %v, want %q", v, c.SandboxNetwork, err, want)
		}
	}
}

func TestLoadConfigFlagsOverrideEnvironment(t *testing.T) {
	env := map[string]string{
		"KILN_ADDR":             "0.0.0.0:9000",
		"KILN_WORKERS":          "4",
		"KILN_OUTBOUND_ALLOW":   "10.0.0.0/8, 192.168.1.7/32",
		"KILN_GITHUB_API_URL":   "https://ghe.example/api/v3",
		"KILN_DELIVERY_BACKOFF": "500ms",
	}
	c, err := LoadConfig([]string{"--addr", "127.0.0.1:9001", "--public-url", "https://kiln.example/"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9001" || c.PublicURL != "https://kiln.example" || c.Workers != 4 ||
		c.GitHubAPIURL != "https://ghe.example/api/v3/" || c.DeliveryBackoff != 500*time.Millisecond {
		t.Fatalf("merged: %+v", c)
	}
	if len(c.OutboundAllow) != 2 || c.OutboundAllow[1].String() != "192.168.1.7/32" {
		t.Fatalf("outbound allow: %v", c.OutboundAllow)
	}
}

func TestLoadConfigRefusesBadValues(t *testing.T) {
	tests := []struct {
		env, value string
	}{
		{"KILN_ADDR", "8080"},
		{"KILN_WORKERS", "0"},
		{"KILN_WORKERS", "many"},
		{"KILN_PUBLIC_URL", "kiln.example"},
		{"KILN_GITHUB_API_URL", "ftp://x"},
		{"KILN_OUTBOUND_ALLOW", "10.0.0.0/33"},
		{"KILN_DELIVERY_ATTEMPTS", "-1"},
		{"KILN_DELIVERY_BACKOFF", "soon"},
		{"KILN_RATE_LIMIT", "-3"},
		{"KILN_SANDBOX_NETWORK", "public"},
		{"KILN_SANDBOX_NETWORK", "bridge"},
		{"KILN_BUILD_UIDS", "0-999"},
		{"KILN_BUILD_UIDS", "65000-66000"},
		{"KILN_BUILD_UIDS", "300-200"},
		{"KILN_SIGNUP", "open"},
		{"KILN_SIGNUP", "github"}, // without the GitHub App and its OAuth client
	}
	for _, tt := range tests {
		_, err := LoadConfig(nil, func(k string) string {
			if k == tt.env {
				return tt.value
			}
			return ""
		}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.env) {
			t.Errorf("%s=%q: error %v does not name the setting", tt.env, tt.value, err)
		}
	}
	if _, err := LoadConfig([]string{"--no-such-flag"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("an unknown flag was accepted")
	}
}

func TestArtifactRetention(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 30 * 24 * time.Hour, "7d": 7 * 24 * time.Hour, "36h": 36 * time.Hour} {
		c, err := LoadConfig(nil, func(k string) string {
			if k == "KILN_ARTIFACT_RETENTION" {
				return v
			}
			return ""
		}, io.Discard)
		if err != nil || c.ArtifactRetention != want {
			t.Errorf("%q: %v %v, want %v", v, c.ArtifactRetention, err, want)
		}
	}
	for _, bad := range []string{"0d", "-1d", "forever", "3x"} {
		if _, err := LoadConfig([]string{"--artifact_retention", bad}, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
