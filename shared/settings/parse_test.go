package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// check runs one parser over its cases: want is the value, or wantErr a part of the error.
func check[T comparable](t *testing.T, name string, parse func(string) (T, error), cases []struct {
	in      string
	want    T
	wantErr string
}) {
	t.Helper()
	for _, c := range cases {
		got, err := parse(c.in)
		switch {
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s(%q) = %v, %v; want an error with %q", name, c.in, got, err, c.wantErr)
		case c.wantErr == "" && (err != nil || got != c.want):
			t.Errorf("%s(%q) = %v, %v; want %v", name, c.in, got, err, c.want)
		}
	}
}

type cases[T any] = []struct {
	in      string
	want    T
	wantErr string
}

func TestParseDays(t *testing.T) {
	const msg = "must be a positive duration such as 30d or 72h"
	check(t, "ParseDays", ParseDays, cases[time.Duration]{
		{"30d", 30 * 24 * time.Hour, ""}, {"1d", 24 * time.Hour, ""}, {"72h", 72 * time.Hour, ""}, {"90m", 90 * time.Minute, ""},
		{"0d", 0, msg}, {"-1d", 0, msg}, {"0s", 0, msg}, {"-5h", 0, msg}, {"d", 0, msg}, {"1.5d", 0, msg},
		{"forever", 0, msg}, {"3x", 0, msg}, {"", 0, msg}, {"999999999999d", 0, msg},
	})
}

func TestParseDuration(t *testing.T) {
	check(t, "ParseDuration", ParseDuration("2s"), cases[time.Duration]{
		{"2s", 2 * time.Second, ""}, {"500ms", 500 * time.Millisecond, ""},
		{"0s", 0, "must be a positive duration such as 2s"}, {"-1s", 0, "such as 2s"}, {"soon", 0, "such as 2s"}, {"30d", 0, "such as 2s"},
	})
}

func TestParseCount(t *testing.T) {
	const msg = "must be a whole number, 1 or more"
	check(t, "ParseCount", ParseCount, cases[int]{{"1", 1, ""}, {"12", 12, ""}, {"0", 0, msg}, {"-1", 0, msg}, {"many", 0, msg}, {"1.5", 0, msg}, {"", 0, msg}})
}

func TestParseRate(t *testing.T) {
	const msg = "must be a number of requests per second, 0 or more"
	check(t, "ParseRate", ParseRate, cases[float64]{{"10", 10, ""}, {"0", 0, ""}, {"0.5", 0.5, ""},
		{"-3", 0, msg}, {"fast", 0, msg}, {"NaN", 0, msg}, {"+Inf", 0, msg}, {"", 0, msg}})
}

func TestParsePublicURL(t *testing.T) {
	const msg = "must be an absolute http or https URL"
	check(t, "ParsePublicURL", ParsePublicURL, cases[string]{
		{"", "", ""}, {"https://kiln.example/", "https://kiln.example", ""}, {"http://127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"https://studio.example/kiln/", "https://studio.example/kiln", ""},
		{"kiln.example", "", msg}, {"ftp://kiln.example", "", msg}, {"https://", "", msg}, {"/kiln", "", msg},
		{"https://kiln.example/?a=1", "", "without a query"}, {"https://kiln.example/?", "", "without a query"}, {"https://kiln.example/#x", "", "or fragment"},
	})
}

func TestParseHTTPBase(t *testing.T) {
	check(t, "ParseHTTPBase", ParseHTTPBase, cases[string]{
		{"https://api.github.com/", "https://api.github.com/", ""}, {"https://ghe.example/api/v3", "https://ghe.example/api/v3/", ""},
		{"ftp://x", "", "must be an absolute http or https URL"}, {"ghe.example", "", "absolute"}, {"", "", "absolute"},
	})
}

func TestParseSMTPURL(t *testing.T) {
	const msg = "must be an smtp:// or smtps:// URL"
	check(t, "ParseSMTPURL", ParseSMTPURL, cases[string]{
		{"", "", ""}, {"smtp://u:p@mail.example:587", "smtp://u:p@mail.example:587", ""}, {"smtps://mail.example:465", "smtps://mail.example:465", ""},
		{"http://mail.example", "", msg}, {"mail.example:587", "", msg}, {"smtp://", "", msg},
	})
}

func TestParseAppID(t *testing.T) {
	const msg = "must be the App's numeric id"
	check(t, "ParseAppID", ParseAppID, cases[int64]{{"", 0, ""}, {"12345", 12345, ""}, {"0", 0, msg}, {"-1", 0, msg}, {"kiln", 0, msg}})
}

func TestParseArtifactStore(t *testing.T) {
	check(t, "ParseArtifactStore", ParseArtifactStore, cases[string]{
		{"file", "file", ""}, {"s3://kiln-artifacts-123/prod", "s3://kiln-artifacts-123/prod", ""},
		{"s3://x", "", "must be file or s3://bucket[/prefix]"}, {"disk", "", "must be file or s3://"}, {"", "", "must be file"},
	})
	if err := ParseS3Store("file"); err == nil {
		t.Error(`ParseS3Store("file") accepted a disk`)
	}
}

func TestParseOutboundAllow(t *testing.T) {
	got, err := OutboundAllow.Parse(" 10.1.2.3/8, ,192.168.1.7/32")
	if err != nil || len(got) != 2 || got[0].String() != "10.0.0.0/8" || got[1].String() != "192.168.1.7/32" {
		t.Fatalf("two ranges: %v %v", got, err)
	}
	if got, err := OutboundAllow.Parse(""); err != nil || got != nil {
		t.Fatalf("none: %v %v", got, err)
	}
	if _, err := OutboundAllow.Parse("10.0.0.0/33"); err == nil || !strings.Contains(err.Error(), `"10.0.0.0/33" is not a CIDR range`) {
		t.Fatalf("a bad range: %v", err)
	}
}

func TestParsePlans(t *testing.T) {
	def, err := ParsePlans("")
	if err != nil || len(def) == 0 {
		t.Fatalf("defaults: %v %v", def, err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "plans.json")
	if err := os.WriteFile(good, []byte(`{"free": {"buildMinutesPerMonth": 600}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePlans(good); err != nil {
		t.Fatalf("a plans file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"free": `), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(dir, "missing.json")} {
		if _, err := ParsePlans(path); err == nil {
			t.Errorf("%s accepted", path)
		}
	}
}

func TestReadNamesTheSettingAndDefaults(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if d, err := ArtifactRetention.Read(getenv); err != nil || d != 30*24*time.Hour {
		t.Fatalf("default: %v %v", d, err)
	}
	env["KILN_ARTIFACT_RETENTION"] = "7d"
	if d, err := ArtifactRetention.Read(getenv); err != nil || d != 7*24*time.Hour {
		t.Fatalf("7d: %v %v", d, err)
	}
	env["KILN_ARTIFACT_RETENTION"] = "0d"
	if _, err := ArtifactRetention.Read(getenv); err == nil || err.Error() != "KILN_ARTIFACT_RETENTION: must be a positive duration such as 30d or 72h" {
		t.Fatalf("0d: %v", err)
	}
}
