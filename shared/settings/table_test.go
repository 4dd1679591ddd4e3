package settings

import (
	"strings"
	"testing"
)

// TestTableRows: every row is named once, says what it means and who reads it; a shared row's
// default is a value its own parser accepts.
func TestTableRows(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Table {
		if !strings.HasPrefix(r.Name, "KILN_") || seen[r.Name] {
			t.Errorf("%q: not KILN_ or listed twice", r.Name)
		}
		seen[r.Name] = true
		if r.Help == "" || r.Kind == "" || r.ReadBy == 0 {
			t.Errorf("%s: help %q, kind %q, read by %v", r.Name, r.Help, r.Kind, r.ReadBy)
		}
		if r.ReadBy&Serve != 0 && r.ReadBy&Lambdas != 0 && r.Kind == KindOwn {
			t.Errorf("%s: read by %v but parsed by one of them only", r.Name, r.ReadBy)
		}
		if got, ok := Lookup(r.Name); !ok || got != r {
			t.Errorf("Lookup(%s) = %+v %v", r.Name, got, ok)
		}
	}
	defaults := map[string]func(string) error{
		PublicURL.Name: discard(PublicURL), RateLimit.Name: discard(RateLimit), Artifacts.Name: discard(Artifacts),
		SMTPURL.Name: discard(SMTPURL), SMTPFrom.Name: discard(SMTPFrom), OutboundAllow.Name: discard(OutboundAllow),
		Plans.Name: discard(Plans), ArtifactRetention.Name: discard(ArtifactRetention), DeliveryAttempts.Name: discard(DeliveryAttempts),
		DeliveryBackoff.Name: discard(DeliveryBackoff), BuildTimeout.Name: discard(BuildTimeout), GitHubAPIURL.Name: discard(GitHubAPIURL),
		GitHubAppID.Name: discard(GitHubAppID), CacheMaxPerOrg.Name: discard(CacheMaxPerOrg), SignUp.Name: discard(SignUp),
		GitHubClientID.Name: discard(GitHubClientID), GitHubWebURL.Name: discard(GitHubWebURL),
	}
	shared := 0
	for _, r := range Table {
		if r.Kind == KindOwn {
			continue
		}
		shared++
		parse, ok := defaults[r.Name]
		if !ok {
			t.Errorf("%s: a shared row without its Setting in this test", r.Name)
			continue
		}
		if err := parse(r.Default); err != nil {
			t.Errorf("%s: its default %q: %v", r.Name, r.Default, err)
		}
	}
	if shared != len(defaults) {
		t.Errorf("%d shared rows in the table, %d Settings: one is missing from Table", shared, len(defaults))
	}
}

func discard[T any](s Setting[T]) func(string) error {
	return func(v string) error { _, err := s.Parse(v); return err }
}

func TestReadersString(t *testing.T) {
	if got := (Serve | Lambdas).String(); got != "serve,api,task,ended,schedule,deliver" {
		t.Errorf("Serve|Lambdas = %q", got)
	}
	if got := Background.String(); got != "schedule,deliver" {
		t.Errorf("Background = %q", got)
	}
}
