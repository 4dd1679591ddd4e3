package dynamostore

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Logs keeps build logs in the table, in chunks: one item per chunk of consecutive lines, in the
// build's own partition "ORG#<org>#LOG#<build>" with sort key "SEQ#<first seq, 12 digits>", so a
// read from any sequence number is two queries and a chunk is written with one conditional put.
// A chunk holds the lines of one append, up to chunkBytes of JSON, gzip-compressed. See
// docs/dynamodb.md for the cost per build.
type Logs struct {
	table dynamo.Table
	// retention and now: see SetRetention (0 keeps logs for ever).
	retention time.Duration
	now       func() time.Time
}

// SetRetention makes the store keep a build's log for retention from the build's creation (as
// long as its artifact): each chunk carries "ttl", the log's expiry in Unix seconds, for the
// table's time to live, and an expired log reads as empty meanwhile (DynamoDB deletes expired
// items within days, not at once). now is the clock (nil: time.Now). Call it before use.
func (l *Logs) SetRetention(retention time.Duration, now func() time.Time) {
	l.retention, l.now = retention, now
}

// expired reports whether the build's log has passed the store's retention.
func (l *Logs) expired(buildID string) bool {
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	return buildlog.Expired(buildID, l.retention, now())
}

// expiry is the ttl of the build's log chunks: 0 (none) without a retention.
func (l *Logs) expiry(buildID string) int64 {
	created, ok := kiln.IDTime(buildID)
	if l.retention <= 0 || !ok {
		return 0
	}
	return created.Add(l.retention).Unix()
}

// NewLogs returns the log store on the table of the given name (the layout CreateTable makes).
func NewLogs(db *dynamo.DB, table string) *Logs { return &Logs{table: db.Table(table)} }

// chunkBytes bounds a chunk's lines, as JSON before compression: far under DynamoDB's 400 KB item
// limit even for lines that do not compress (a line is at most buildlog.MaxLineBytes, or six
// times that as escaped JSON).
const chunkBytes = 256 << 10

const typeLogChunk = "logchunk"

// logChunk is one item of a log.
type logChunk struct {
	PK    string `dynamo:"PK"`
	SK    string `dynamo:"SK"`
	Type  string `dynamo:"type"`
	First int64  `dynamo:"first"`
	Count int64  `dynamo:"count"`
	Lines []byte `dynamo:"lines"` // gzip of one JSON object a line: {"t","l","m"}
	// TTL is when the log expires, in Unix seconds, for the table's time to live (see
	// SetRetention); left out without a retention.
	TTL int64 `dynamo:"ttl,omitempty"`
}

type chunkLine struct {
	T int64         `json:"t"` // unix milliseconds
	L kiln.LogLevel `json:"l"`
	M string        `json:"m"`
}

func logPK(orgID, buildID string) string { return orgPK(orgID) + "#LOG#" + buildID }
func logSK(first int64) string           { return fmt.Sprintf("SEQ#%012d", first) }

func logKey(orgID, buildID string) (string, error) {
	if !kiln.ValidID(orgID) || !kiln.ValidID(buildID) {
		return "", fmt.Errorf("dynamostore: logs: bad id")
	}
	return logPK(orgID, buildID), nil
}

// Append writes lines as sequence numbers first, first+1, ..., one chunk item per chunkBytes.
// A chunk whose first number is already stored is left as it is, so a retried append writes
// each line once. The writer appends in order; a read never goes past a missing number.
func (l *Logs) Append(ctx context.Context, orgID, buildID string, first int64, lines ...kiln.LogLine) error {
	pk, err := logKey(orgID, buildID)
	if err != nil {
		return err
	}
	if first < 1 {
		return fmt.Errorf("dynamostore: logs: sequence numbers start at 1, not %d", first)
	}
	lines = buildlog.CutAll(lines)
	for len(lines) > 0 {
		data, n, err := encodeChunk(lines)
		if err != nil {
			return err
		}
		c := logChunk{PK: pk, SK: logSK(first), Type: typeLogChunk, First: first, Count: int64(n), Lines: data, TTL: l.expiry(buildID)}
		err = l.table.Put(c).If("attribute_not_exists($)", attrPK).Run(ctx)
		if err != nil && !isCondFailed(err) {
			return wrap("append log", err)
		}
		lines, first = lines[n:], first+int64(n)
	}
	return nil
}

// encodeChunk compresses the leading lines that fit in one chunk (at least one) and says how
// many it took.
func encodeChunk(lines []kiln.LogLine) ([]byte, int, error) {
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	n := 0
	for _, ln := range lines {
		before := raw.Len()
		if err := enc.Encode(chunkLine{T: ln.Time.UnixMilli(), L: ln.Level, M: ln.Message}); err != nil {
			return nil, 0, fmt.Errorf("dynamostore: logs: %w", err)
		}
		if n > 0 && raw.Len() > chunkBytes {
			raw.Truncate(before)
			break
		}
		n++
	}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, 0, fmt.Errorf("dynamostore: logs: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, 0, fmt.Errorf("dynamostore: logs: %w", err)
	}
	return z.Bytes(), n, nil
}

func decodeChunk(c *logChunk) ([]kiln.LogLine, error) {
	zr, err := gzip.NewReader(bytes.NewReader(c.Lines))
	if err != nil {
		return nil, fmt.Errorf("dynamostore: logs: chunk %s: %w", c.SK, err)
	}
	dec := json.NewDecoder(zr)
	var out []kiln.LogLine
	for {
		var cl chunkLine
		if err := dec.Decode(&cl); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("dynamostore: logs: chunk %s: %w", c.SK, err)
		}
		out = append(out, kiln.LogLine{Time: time.UnixMilli(cl.T).UTC(), Level: cl.L, Message: cl.M})
	}
}

// Read returns up to max (at most buildlog.MaxRead) lines from sequence number from on, in order
// and without gaps: the chunk holding `from`, then the chunks after it, with consistent reads.
func (l *Logs) Read(ctx context.Context, orgID, buildID string, from int64, max int) ([]buildlog.Line, error) {
	pk, err := logKey(orgID, buildID)
	if err != nil {
		return nil, err
	}
	from, max = max64(from, 1), min(maxInt(max, 1), buildlog.MaxRead)
	if l.expired(buildID) {
		return nil, nil
	}
	r := chunkReader{next: from, max: max}
	var first logChunk
	err = l.table.Get(attrPK, pk).Range(attrSK, dynamo.LessOrEqual, logSK(from)).
		Order(dynamo.Descending).Limit(1).Consistent(true).One(ctx, &first)
	switch {
	case isNotFound(err):
	case err != nil:
		return nil, wrap("read log", err)
	default:
		if err := r.take(&first); err != nil {
			return nil, err
		}
	}
	if r.done {
		return r.out, nil
	}
	iter := l.table.Get(attrPK, pk).Range(attrSK, dynamo.Greater, logSK(from)).
		Order(dynamo.Ascending).Limit(max - len(r.out)).Consistent(true).Iter()
	var c logChunk
	for !r.done && iter.Next(ctx, &c) {
		if err := r.take(&c); err != nil {
			return nil, err
		}
		c = logChunk{}
	}
	if err := iter.Err(); err != nil {
		return nil, wrap("read log", err)
	}
	return r.out, nil
}

// chunkReader collects lines from chunks in sequence order, skipping numbers already taken and
// stopping at a missing one.
type chunkReader struct {
	next int64
	max  int
	out  []buildlog.Line
	done bool
}

func (r *chunkReader) take(c *logChunk) error {
	if c.First > r.next {
		r.done = true // a gap: nothing past it is read
		return nil
	}
	if c.First+c.Count <= r.next {
		return nil
	}
	lines, err := decodeChunk(c)
	if err != nil {
		return err
	}
	for i, ln := range lines {
		seq := c.First + int64(i)
		if seq < r.next {
			continue
		}
		r.out = append(r.out, buildlog.Line{Seq: seq, LogLine: ln})
		r.next++
		if len(r.out) >= r.max {
			r.done = true
			return nil
		}
	}
	return nil
}

// Last returns the sequence number of the last line written, 0 for an empty log.
func (l *Logs) Last(ctx context.Context, orgID, buildID string) (int64, error) {
	pk, err := logKey(orgID, buildID)
	if err != nil {
		return 0, err
	}
	if l.expired(buildID) {
		return 0, nil
	}
	var c logChunk
	err = l.table.Get(attrPK, pk).Range(attrSK, dynamo.BeginsWith, "SEQ#").
		Order(dynamo.Descending).Limit(1).Consistent(true).One(ctx, &c)
	if isNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, wrap("last log line", err)
	}
	return c.First + c.Count - 1, nil
}

// Delete removes a build's log.
func (l *Logs) Delete(ctx context.Context, orgID, buildID string) error {
	pk, err := logKey(orgID, buildID)
	if err != nil {
		return err
	}
	var keys []logChunk
	if err := l.table.Get(attrPK, pk).Project(attrPK, attrSK).Consistent(true).All(ctx, &keys); err != nil {
		return wrap("delete log", err)
	}
	for _, k := range keys {
		if err := l.table.Delete(attrPK, k.PK).Range(attrSK, k.SK).Run(ctx); err != nil {
			return wrap("delete log", err)
		}
	}
	return nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}
