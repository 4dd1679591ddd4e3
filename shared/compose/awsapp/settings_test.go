package awsapp

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/settings"
	"github.com/kilnbuild/kiln/shared/settings/settingstest"
)

// awsLoaders are the loaders of the functions (functions/<name>/main.go; infra/stack's
// loaders_test checks which each main uses), each with the function that marks its rows.
var awsLoaders = []struct {
	name string
	fn   settings.Readers
	load func(getenv func(string) string) error
}{
	{"LoadAWSConfig", settings.API, func(getenv func(string) string) error { _, err := LoadAWSConfig(getenv); return err }},
	{"LoadBackgroundConfig", settings.Schedule, func(getenv func(string) string) error { _, err := LoadBackgroundConfig(getenv); return err }},
}

// TestSettingsTableMatchesAWSLoaders: each AWS loader reads exactly the settings the table marks
// for its functions, and refuses a bad value of each shared one with an error naming it.
func TestSettingsTableMatchesAWSLoaders(t *testing.T) {
	base := map[string]string{"KILN_DYNAMODB_TABLE": "kiln", "KILN_MASTER_KEY_SECRET_ARN": "arn:aws:secretsmanager:eu-west-1:1:secret:k",
		"KILN_DELIVERY_QUEUE_URL": "https://sqs.eu-west-1.amazonaws.com/123456789012/kiln-delivery"}
	for _, l := range awsLoaders {
		read := map[string]bool{}
		if err := l.load(func(k string) string { read[k] = true; return base[k] }); err != nil {
			t.Fatalf("%s with the required settings: %v", l.name, err)
		}
		var want []string
		for _, r := range settings.Table {
			if r.ReadBy&l.fn != 0 {
				want = append(want, r.Name)
			}
		}
		if got := slices.Sorted(maps.Keys(read)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("%s reads %v; the table marks %v for %v", l.name, got, want, l.fn)
		}
		for _, r := range settings.Table {
			bad, ok := settingstest.BadValues[r.Kind]
			if r.ReadBy&l.fn == 0 || !ok {
				continue
			}
			env := maps.Clone(base)
			env[r.Name] = bad
			if r.Name == settings.GitHubAppID.Name {
				env["KILN_GITHUB_SECRET_ARN"] = "arn:aws:secretsmanager:eu-west-1:1:secret:gh" // it goes with the App's id
			}
			err := l.load(func(k string) string { return env[k] })
			if err == nil || !strings.HasPrefix(err.Error(), r.Name+":") {
				t.Errorf("%s with %s=%q: error %v, want one naming it", l.name, r.Name, bad, err)
			}
		}
	}
}

// TestAWSReadsSharedSettingsAsServeDoes: the values of the shared settings, defaults included,
// are those kiln serve gets.
func TestAWSReadsSharedSettingsAsServeDoes(t *testing.T) {
	env := map[string]string{"KILN_DYNAMODB_TABLE": "kiln", "KILN_MASTER_KEY_SECRET_ARN": "arn:aws:secretsmanager:eu-west-1:1:secret:k",
		"KILN_DELIVERY_QUEUE_URL": "https://sqs.eu-west-1.amazonaws.com/123456789012/kiln-delivery"}
	getenv := func(k string) string { return env[k] }
	c, err := LoadBackgroundConfig(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.RateLimit != 10 || c.SMTPFrom != "kiln <kiln@localhost>" || c.LogRetention != 30*24*time.Hour || c.ArtifactRetention != c.LogRetention ||
		c.DeliveryAttempts != 5 || c.DeliveryBackoff != 2*time.Second || c.Workflow.BuildTimeLimit != 4*time.Hour ||
		c.GitHub.APIURL != "https://api.github.com/" || len(c.Plans) == 0 || c.PublicURL != "" || c.Artifacts != "" {
		t.Fatalf("defaults: %+v", c)
	}
	env["KILN_PUBLIC_URL"] = "https://kiln.example/"
	env["KILN_ARTIFACT_RETENTION"] = "72h"
	env["KILN_GITHUB_API_URL"] = "https://ghe.example/api/v3"
	if c, err = LoadBackgroundConfig(getenv); err != nil {
		t.Fatal(err)
	}
	if c.PublicURL != "https://kiln.example" || c.LogRetention != 72*time.Hour || c.ArtifactRetention != 72*time.Hour || c.GitHub.APIURL != "https://ghe.example/api/v3/" {
		t.Fatalf("set: public URL %q, retention %v/%v, GitHub %q", c.PublicURL, c.LogRetention, c.ArtifactRetention, c.GitHub.APIURL)
	}
	env["KILN_PUBLIC_URL"] = "https://kiln.example/?x=1"
	if _, err := LoadAWSConfig(getenv); err == nil || !strings.Contains(err.Error(), "KILN_PUBLIC_URL") {
		t.Fatalf("a public URL with a query: %v", err)
	}
}
