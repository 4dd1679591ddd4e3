package kiln

import (
	"strings"
	"testing"
	"time"
)

func TestParsePlans(t *testing.T) {
	cases := []struct {
		name, json string
		check      func(t PlanTable) bool
		wantErr    string
	}{
		{"empty keeps the defaults", `{}`, func(p PlanTable) bool { return p[PlanFree].BuildMinutesPerMonth == 300 && p[PlanFree].Projects == 1 }, ""},
		{"a partial override keeps the rest", `{"free": {"buildMinutesPerMonth": 600}}`,
			func(p PlanTable) bool {
				return p[PlanFree].BuildMinutesPerMonth == 600 && p[PlanFree].ConcurrentBuilds == 1 && !p[PlanFree].Perforce
			}, ""},
		{"pro limited", `{"pro": {"buildMinutesPerMonth": 5000, "concurrentBuilds": 4}}`,
			func(p PlanTable) bool { return p[PlanPro].BuildMinutesPerMonth == 5000 && p[PlanPro].Perforce }, ""},
		{"unknown plan", `{"gold": {}}`, nil, `unknown plan "gold"`},
		{"unknown field", `{"free": {"minutes": 1}}`, nil, `plan free: json: unknown field "minutes"`},
		{"negative", `{"free": {"projects": -1}}`, nil, "plan free: projects must be 0 (unlimited) or more"},
		{"enterprise sockets", `{"enterprise": {"liveConnections": 5000}}`,
			func(p PlanTable) bool {
				return p[PlanEnterprise].LiveConnections == 5000 && p[PlanFree].LiveConnections == 20
			}, ""},
		{"negative sockets", `{"pro": {"liveConnections": -1}}`, nil, "plan pro: liveConnections must be 0 (unlimited) or more"},
		{"wrong type", `{"free": {"perforce": "yes"}}`, nil, "plan free"},
		{"not an object", `[1]`, nil, "not a JSON object of plans"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParsePlans([]byte(c.json))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !c.check(got) {
				t.Fatalf("ParsePlans = %+v, %v", got, err)
			}
		})
	}
}

func TestPlanLimitsOfAnOrganization(t *testing.T) {
	table := DefaultPlans()
	cases := []struct {
		org  Organization
		want PlanLimits
	}{
		{Organization{Plan: PlanFree}, PlanLimits{BuildMinutesPerMonth: 300, ConcurrentBuilds: 1, Projects: 1, LiveConnections: 20}},
		{Organization{Plan: PlanPro, MaxConcurrentBuilds: 9}, PlanLimits{Perforce: true, AutoDeploy: true, LiveConnections: 200}}, // only enterprise sets its own
		{Organization{Plan: PlanEnterprise}, PlanLimits{Perforce: true, AutoDeploy: true, LiveConnections: 2000}},
		{Organization{Plan: PlanEnterprise, MaxConcurrentBuilds: 3}, PlanLimits{ConcurrentBuilds: 3, Perforce: true, AutoDeploy: true, LiveConnections: 2000}},
	}
	for _, c := range cases {
		if got := table.Limits(&c.org); got != c.want {
			t.Errorf("Limits(%+v) = %+v, want %+v", c.org, got, c.want)
		}
	}
}

func TestBuildMinutesAndMonths(t *testing.T) {
	start := time.Date(2026, 1, 31, 23, 59, 30, 0, time.UTC)
	cases := []struct {
		d    time.Duration
		want int64
	}{{0, 0}, {time.Millisecond, 1}, {time.Minute, 1}, {time.Minute + time.Millisecond, 2}, {90 * time.Minute, 90}}
	for _, c := range cases {
		if got := BuildMinutes(start, start.Add(c.d)); got != c.want {
			t.Errorf("BuildMinutes(%v) = %d, want %d", c.d, got, c.want)
		}
	}
	if m := UsageMonth(start.Add(30 * time.Second)); m != "2026-02" {
		t.Errorf("UsageMonth of midnight = %s", m)
	}
	if m := UsageMonth(time.Date(2026, 2, 1, 0, 30, 0, 0, time.FixedZone("CET+1", 3600))); m != "2026-01" {
		t.Errorf("UsageMonth is UTC: got %s, want 2026-01", m)
	}
	for s, ok := range map[string]bool{"2026-02": true, "2026-2": false, "2026-13": false, "26-02": false, "2026-02-01": false, "": false} {
		if _, got := ParseUsageMonth(s); got != ok {
			t.Errorf("ParseUsageMonth(%q) ok = %v, want %v", s, got, ok)
		}
	}
}
