package bench

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// percentile is the q-th percentile (0..99) of xs, taken from a sorted copy; the zero value for
// no xs.
func percentile[T cmp.Ordered](xs []T, q int) T {
	if len(xs) == 0 {
		var zero T
		return zero
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)*q/100]
}

// median is the middle of xs (the 50th percentile); the zero value for no xs.
func median[T cmp.Ordered](xs []T) T { return percentile(xs, 50) }

// reportWaits reports the median and 99th percentile of waits, in µs, as b's metrics p50-µs and
// p99-µs, and returns them.
func reportWaits(b *testing.B, waits []time.Duration) (p50, p99 time.Duration) {
	p50, p99 = median(waits), percentile(waits, 99)
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
	return p50, p99
}

// benchOrg opens a fresh SQLite store, closed when the benchmark ends, holding one organization:
// the store, the organization's id and its owner's token.
func benchOrg(b *testing.B) (st *sqlitestore.Store, org, token string) {
	b.Helper()
	st = storefixture.SQLite(b)
	o, token := storefixture.Org(b, st, "", time.Now())
	return st, o.ID, token
}
