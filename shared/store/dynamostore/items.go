package dynamostore

import "time"

// Timestamps are stored as numbers of milliseconds since the Unix epoch (the precision of the API)
// and read back in UTC.

func toMS(t time.Time) int64 { return t.UnixMilli() }

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// toMSPtr stores an optional time; nil is omitted from the item.
func toMSPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	ms := t.UnixMilli()
	return &ms
}

func fromMSPtr(ms *int64) *time.Time {
	if ms == nil {
		return nil
	}
	t := fromMS(*ms)
	return &t
}
