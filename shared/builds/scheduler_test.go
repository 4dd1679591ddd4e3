package builds

import (
	"testing"
	"time"
)

func TestLatestSlot(t *testing.T) {
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	long := day.Add(-30 * 24 * time.Hour)
	tests := []struct {
		name, expr string
		now, since time.Time
		want       time.Time
		ok         bool
	}{
		{"exactly on the slot", "0 3 * * *", day.Add(3 * time.Hour), long, day.Add(3 * time.Hour), true},
		{"a minute after", "0 3 * * *", day.Add(3*time.Hour + time.Minute), long, day.Add(3 * time.Hour), true},
		{"too long after: skipped", "0 3 * * *", day.Add(4 * time.Hour), long, time.Time{}, false},
		{"before the slot", "0 3 * * *", day.Add(2*time.Hour + 59*time.Minute), long, time.Time{}, false},
		{"every 5 minutes: the latest", "*/5 * * * *", day.Add(17 * time.Minute), long, day.Add(15 * time.Minute), true},
		{"not before the setting existed", "*/5 * * * *", day.Add(17 * time.Minute), day.Add(16 * time.Minute), time.Time{}, false},
		{"bad expression", "nope", day, long, time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := LatestSlot(tt.expr, tt.now, tt.since)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("%s: LatestSlot = %v %v, want %v %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
