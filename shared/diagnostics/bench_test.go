package diagnostics

import (
	"fmt"
	"testing"
)

// BenchmarkCollect200kLines reads a 200,000-line log: cook chatter, with a warning every 100
// lines and an error every 1,000.
func BenchmarkCollect200kLines(b *testing.B) {
	lines := make([]string, 200_000)
	for i := range lines {
		switch {
		case i%1000 == 0:
			lines[i] = fmt.Sprintf("/ws/Game/Source/A%d.cpp:%d:3: error: bad thing %d", i%7, i, i)
		case i%100 == 0:
			lines[i] = fmt.Sprintf("LogCook: Warning: /Game/Asset%d has no mips", i)
		default:
			lines[i] = fmt.Sprintf("LogCook: Display: Cooking /Game/Fake/Asset%d (not in the derived data cache)", i)
		}
	}
	b.ReportAllocs()
	for range b.N {
		c := New("Game/Game.uproject", 0)
		for _, l := range lines {
			c.Add(l)
		}
		if r := c.Result(); r.Errors != 200 || len(r.Diagnostics) != DefaultMax {
			b.Fatalf("errors %d, kept %d", r.Errors, len(r.Diagnostics))
		}
	}
}
