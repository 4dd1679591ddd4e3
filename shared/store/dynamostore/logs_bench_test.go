package dynamostore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// BenchmarkLogCostPerBuild writes a build log of 100,000 Unreal-style lines of about 120 bytes in
// appends of 256 lines (the reporter's full batches) to DynamoDB Local, and reports what it cost:
// items, write request units (one per started KB of each item) and bytes stored. docs/dynamodb.md
// quotes its figures.
func BenchmarkLogCostPerBuild(b *testing.B) {
	const lines, batch = 100_000, 256
	for i := 0; i < b.N; i++ {
		_, table := newStoreTable(b)
		logs := dynamostore.NewLogs(newDB(), table.Name())
		org, build := kiln.NewID(), kiln.NewID()
		at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		var text int
		for first := 1; first <= lines; first += batch {
			var chunk []kiln.LogLine
			for n := first; n < first+batch && n <= lines; n++ {
				msg := fmt.Sprintf("LogCook: Display: Cooking /Game/Maps/Level_%04d/Actors/BP_Prop_%06d.uasset for Linux (package %d of %d)", n%977, n, n, lines)
				text += len(msg)
				chunk = append(chunk, kiln.LogLine{Time: at.Add(time.Duration(n) * time.Millisecond), Level: kiln.LevelInfo, Message: msg})
			}
			if err := logs.Append(b.Context(), org, build, int64(first), chunk...); err != nil {
				b.Fatal(err)
			}
		}
		var items []map[string]any
		if err := table.Scan().All(b.Context(), &items); err != nil {
			b.Fatal(err)
		}
		var stored, wcu int
		for _, it := range items {
			size := 0
			for name, v := range it {
				size += len(name)
				switch v := v.(type) {
				case string:
					size += len(v)
				case []byte:
					size += len(v)
				default:
					size += 8
				}
			}
			stored += size
			wcu += (size + 1023) / 1024
		}
		b.ReportMetric(float64(len(items)), "items/build")
		b.ReportMetric(float64(wcu), "WCU/build")
		b.ReportMetric(float64(stored)/1e6, "MB-stored/build")
		b.ReportMetric(float64(text)/float64(lines), "bytes/line")
		if i == 0 {
			fmt.Printf("log cost: %d lines (%s of text) → %d items, %d write units, %.1f MB stored\n",
				lines, strings.TrimSpace(fmt.Sprintf("%.1f MB", float64(text)/1e6)), len(items), wcu, float64(stored)/1e6)
		}
	}
}
