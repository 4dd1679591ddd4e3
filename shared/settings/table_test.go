package settings

import (
	"strings"
	"testing"
)

// typed are the rows with a parser (Setting[T]), each reduced to its parser's error.
var typed = []struct {
	row   Row
	parse func(string) error
}{
	{PublicURL.Row, discard(PublicURL)}, {RateLimit.Row, discard(RateLimit)}, {Artifacts.Row, discard(Artifacts)},
	{SMTPURL.Row, discard(SMTPURL)}, {SMTPFrom.Row, discard(SMTPFrom)}, {OutboundAllow.Row, discard(OutboundAllow)},
	{Plans.Row, discard(Plans)}, {ArtifactRetention.Row, discard(ArtifactRetention)}, {DeliveryAttempts.Row, discard(DeliveryAttempts)},
	{DeliveryBackoff.Row, discard(DeliveryBackoff)}, {BuildTimeout.Row, discard(BuildTimeout)}, {GitHubAPIURL.Row, discard(GitHubAPIURL)},
	{GitHubAppID.Row, discard(GitHubAppID)}, {CacheMaxPerOrg.Row, discard(CacheMaxPerOrg)}, {SignUp.Row, discard(SignUp)},
	{GitHubClientID.Row, discard(GitHubClientID)}, {GitHubWebURL.Row, discard(GitHubWebURL)},
	{Workers.Row, discard(Workers)}, {AgentWait.Row, discard(AgentWait)}, {LogMaxLines.Row, discard(LogMaxLines)},
	{ArtifactMax.Row, discard(ArtifactMax)}, {CodeBuildQuota.Row, discard(CodeBuildQuota)},
}

// TestTableRows: every row of the registry is named once, says what it means and who reads it;
// the test-only rows are apart; a row read by kiln serve and the functions has a shared parser.
func TestTableRows(t *testing.T) {
	seen := map[string]bool{}
	for _, group := range []struct {
		name string
		rows []Row
		test bool
	}{{"Table", Table, false}, {"TestOnly", TestOnly, true}} {
		for _, r := range group.rows {
			if !strings.HasPrefix(r.Name, "KILN_") || strings.HasSuffix(r.Name, "_") || seen[r.Name] {
				t.Errorf("%s: %q: not a KILN_ name or listed twice", group.name, r.Name)
			}
			seen[r.Name] = true
			if r.Help == "" || r.Kind == "" || r.ReadBy == 0 {
				t.Errorf("%s: help %q, kind %q, read by %v", r.Name, r.Help, r.Kind, r.ReadBy)
			}
			if onlyTests := r.ReadBy == Test; onlyTests != group.test {
				t.Errorf("%s: read by %v, in %s: rows only tests read belong in TestOnly, and only they", r.Name, r.ReadBy, group.name)
			}
			if r.ReadBy&Serve != 0 && r.ReadBy&Lambdas != 0 && r.Kind == KindOwn {
				t.Errorf("%s: read by %v but parsed by one of them only", r.Name, r.ReadBy)
			}
			if got, ok := Lookup(r.Name); !ok || got != r {
				t.Errorf("Lookup(%s) = %+v %v", r.Name, got, ok)
			}
		}
	}
	for _, s := range typed {
		if got, ok := Lookup(s.row.Name); !ok || got != s.row {
			t.Errorf("%s: a Setting whose row is not in Table", s.row.Name)
		}
		if err := s.parse(s.row.Default); err != nil {
			t.Errorf("%s: its default %q: %v", s.row.Name, s.row.Default, err)
		}
	}
	for _, r := range Table {
		if r.ReadBy&Serve == 0 || r.ReadBy&Lambdas == 0 {
			continue
		}
		found := false
		for _, s := range typed {
			found = found || s.row.Name == r.Name
		}
		if !found {
			t.Errorf("%s: read by kiln serve and the functions without a Setting (its parser) in this test", r.Name)
		}
	}
}

func discard[T any](s Setting[T]) func(string) error {
	return func(v string) error { _, err := s.Parse(v); return err }
}

func TestRowGet(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		set, want string
	}{{"", "./engines"}, {"/opt/engines", "/opt/engines"}} {
		env[Engines.Name] = tc.set
		if got := Engines.Get(getenv); got != tc.want {
			t.Errorf("KILN_ENGINES=%q: Get = %q, want %q", tc.set, got, tc.want)
		}
	}
}

func TestReadersString(t *testing.T) {
	for _, tc := range []struct {
		r    Readers
		want string
	}{
		{Serve | Lambdas, "serve,api,task,ended,schedule,deliver"},
		{Background, "schedule,deliver"},
		{Functions, "api,task,ended,schedule,deliver,admin,live"},
		{Serve | Agent | AWSLocal | CLI | Child | Test, "serve,agent,aws-local,cli,child,test"},
	} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%d = %q, want %q", tc.r, got, tc.want)
		}
	}
}
