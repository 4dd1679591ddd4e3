package kiln

import (
	"testing"
	"time"
)

func TestBuildSettingTimeLimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		minutes   int
		service   time.Duration
		want      time.Duration
		wantValid bool
	}{
		{"the service's limit", 0, 4 * time.Hour, 4 * time.Hour, true},
		{"a lower limit of its own", 90, 4 * time.Hour, 90 * time.Minute, true},
		{"exactly the service's", 240, 4 * time.Hour, 4 * time.Hour, true},
		{"above the service's", 241, 4 * time.Hour, 4 * time.Hour, false},
		{"negative", -5, 4 * time.Hour, 4 * time.Hour, false},
		{"no service limit: its own", 600, 0, 10 * time.Hour, true},
		{"no service limit: a day at most", 24*60 + 1, 0, 24*time.Hour + time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &BuildSetting{TimeoutMinutes: tc.minutes}
			if err := s.CheckTimeLimit(tc.service); (err == nil) != tc.wantValid {
				t.Errorf("CheckTimeLimit(%v) = %v, want valid %v", tc.service, err, tc.wantValid)
			}
			if tc.wantValid || tc.minutes > 0 {
				if got := s.TimeLimit(tc.service); got != tc.want {
					t.Errorf("TimeLimit(%v) = %v, want %v", tc.service, got, tc.want)
				}
			}
		})
	}
}
