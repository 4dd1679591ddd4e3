package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCLIUsage: kiln usage shows the organization's month against its plan: the minutes of a
// build that ran, by platform, its project and its artifact's bytes; a bad month is the API's
// validation error with its request id (exit 2).
func TestCLIUsage(t *testing.T) {
	w := newCLIWorld(t)
	if _, errOut, code, err := runKiln(t, w.env, "builds", "trigger", "Shooter", w.settings["main"], "--follow"); code != 0 {
		t.Fatalf("trigger --follow: exit %d (%v)\n%s", code, err, errOut)
	}

	out, _, code, err := runKiln(t, w.env, "usage", "--json")
	if code != 0 {
		t.Fatalf("usage --json: exit %d (%v)", code, err)
	}
	var u struct {
		Plan, Month  string
		BuildMinutes struct {
			Used       int64
			Allowed    *int64
			ByPlatform map[string]int64
		}
		Projects             struct{ Current int }
		ArtifactStorageBytes int64
		BuildCaches          *struct {
			Bytes    int64
			Count    int
			MaxBytes *int64
		}
	}
	if err := json.Unmarshal([]byte(out), &u); err != nil {
		t.Fatalf("usage --json printed no JSON: %v\n%s", err, out)
	}
	month := time.Now().UTC().Format("2006-01")
	if u.Plan != "enterprise" || u.Month != month || u.BuildMinutes.Used < 1 || u.BuildMinutes.ByPlatform["Linux"] != u.BuildMinutes.Used ||
		u.BuildMinutes.Allowed != nil || u.Projects.Current != 1 || u.ArtifactStorageBytes <= 0 {
		t.Errorf("usage: %+v", u)
	}
	// The build that completed saved its build cache; the cap is KILN_CACHE_MAX_PER_ORG's default.
	if c := u.BuildCaches; c == nil || c.Count != 1 || c.Bytes <= 0 || c.MaxBytes == nil || *c.MaxBytes != 100<<30 {
		t.Errorf("build caches: %+v", c)
	}

	out, _, code, err = runKiln(t, w.env, "usage")
	if code != 0 || !strings.Contains(out, "enterprise plan, "+month) || !strings.Contains(out, "build minutes") ||
		!strings.Contains(out, "unlimited") || !strings.Contains(out, "minutes on Linux") ||
		!regexp.MustCompile(`build caches \(now\) +[0-9.]+ (B|KiB) in 1 +100\.0 GiB \(oldest removed\)`).MatchString(out) {
		t.Errorf("usage: exit %d (%v)\n%s", code, err, out)
	}

	_, _, code, err = runKiln(t, w.env, "usage", "--month", "2026-13")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "YYYY-MM") || !strings.Contains(err.Error(), "request id") {
		t.Errorf("usage --month 2026-13: exit %d, error %v; want 2 with the API's message and request id", code, err)
	}
}
