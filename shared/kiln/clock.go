package kiln

import "time"

// Now is the time kiln records: clock's (the wall clock's when clock is nil), in UTC, to the
// millisecond, as every store keeps it.
func Now(clock func() time.Time) time.Time {
	if clock == nil {
		clock = time.Now
	}
	return clock().UTC().Truncate(time.Millisecond)
}
