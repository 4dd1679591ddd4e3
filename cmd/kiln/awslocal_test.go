package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// TestAWSLocalSettingsCarryKilnServesSettings: kiln aws-local gets every setting of kiln serve
// it reads (no field of awslocalapp.Settings is left out), and its public URL follows the API's
// listen address unless KILN_PUBLIC_URL is given.
func TestAWSLocalSettingsCarryKilnServesSettings(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(t.TempDir(), "serve.pem")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"KILN_ADDR": "127.0.0.1:0", "KILN_DATA": t.TempDir(), "KILN_PUBLIC_URL": "https://kiln.example.com", "KILN_ENGINES": "/opt/engines",
		"KILN_WORKERS": "3", "KILN_GITHUB_APP_ID": "42", "KILN_GITHUB_APP_KEY": keyPath, "KILN_GITHUB_WEBHOOK_SECRET": "hook-secret",
		"KILN_P4": "/usr/bin/p4", "KILN_SANDBOX": "bwrap", "KILN_BWRAP": "/usr/bin/bwrap", "KILN_OUTBOUND_ALLOW": "10.0.0.0/8",
		"KILN_RATE_LIMIT": "7", "KILN_SMTP_URL": "smtp://mail.example.com:25", "KILN_SMTP_FROM": "kiln <kiln@example.com>",
		"KILN_BUILD_TIMEOUT": "2h", "KILN_ARTIFACT_MAX": "1GiB", "KILN_ARTIFACT_RETENTION": "7d",
		"KILN_DELIVERY_ATTEMPTS": "3", "KILN_DELIVERY_BACKOFF": "5s",
		"KILN_SIGNUP": "github", "KILN_GITHUB_CLIENT_ID": "Iv1.kiln", "KILN_GITHUB_CLIENT_SECRET": "client-secret",
	}
	load := func(t *testing.T, env map[string]string) serve.Config {
		t.Helper()
		cfg, err := serve.LoadConfig(nil, func(k string) string { return env[k] }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	s, err := awsLocalSettings(load(t, env))
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		if v.Type().Field(i).Name == "CodeBuildQuota" {
			continue // aws-local's own setting (KILN_CODEBUILD_QUOTA), not kiln serve's: read beside them
		}
		if v.Field(i).IsZero() {
			t.Errorf("awslocalapp.Settings.%s is not set from kiln serve's settings", v.Type().Field(i).Name)
		}
	}
	if s.PublicURL != "https://kiln.example.com" || s.GitHubWebhookSecret != "hook-secret" || s.Workers != 3 {
		t.Errorf("settings %+v", s)
	}

	delete(env, "KILN_PUBLIC_URL")
	if s, err := awsLocalSettings(load(t, env)); err != nil || s.PublicURL != "" {
		t.Errorf("without KILN_PUBLIC_URL: public URL %q, %v; want \"\" (the API's listen address)", s.PublicURL, err)
	}
}
