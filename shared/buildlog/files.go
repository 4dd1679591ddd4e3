package buildlog

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Files keeps logs as files: dir/<orgID>/<buildID>.jsonl holds the lines as JSON, one a line,
// each with its sequence number; dir/<orgID>/<buildID>.idx indexes the file (see index.go) so
// that reading from a sequence number, or finding the last one after a restart, reads no more
// than one appended chunk besides the lines asked for.
type Files struct {
	dir     string
	mu      sync.Mutex // serialises appends; lines of one build arrive from one writer anyway
	watches watchers
	// retention and now: see SetRetention (0 keeps logs for ever).
	retention time.Duration
	now       func() time.Time
}

// NewFiles keeps logs under dir.
func NewFiles(dir string) (*Files, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("buildlog: %w", err)
	}
	return &Files{dir: dir}, nil
}

// record is a line as stored. Logs written before sequence numbers existed have no "s": their
// lines are numbered by position.
type record struct {
	S int64         `json:"s,omitempty"`
	T int64         `json:"t"` // unix milliseconds
	L kiln.LogLevel `json:"l"`
	M string        `json:"m"`
}

// paths are a build's log file and its index.
type paths struct{ log, idx string }

func (f *Files) paths(orgID, buildID string) (paths, error) {
	if !kiln.ValidID(orgID) || !kiln.ValidID(buildID) {
		return paths{}, fmt.Errorf("buildlog: bad id")
	}
	base := filepath.Join(f.dir, orgID, buildID)
	return paths{log: base + ".jsonl", idx: base + ".idx"}, nil
}

// Append writes lines as sequence numbers first, first+1, ... Lines at numbers the log already
// holds are skipped, so retrying an append that failed half way writes each line once; a first
// past the next number is ErrGap. Messages longer than MaxLineBytes are cut.
func (f *Files) Append(ctx context.Context, orgID, buildID string, first int64, lines ...kiln.LogLine) error {
	p, err := f.paths(orgID, buildID)
	if err != nil {
		return err
	}
	if first < 1 {
		return fmt.Errorf("buildlog: sequence numbers start at 1, not %d", first)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	end, err := f.end(ctx, p)
	if err != nil {
		return err
	}
	if first > end.seq {
		return fmt.Errorf("%w: the log of build %s ends before %d, the append starts at %d", ErrGap, buildID, end.seq, first)
	}
	skip := end.seq - first
	if skip >= int64(len(lines)) {
		return nil
	}
	lines = CutAll(lines[skip:])
	if err := os.MkdirAll(filepath.Dir(p.log), 0o700); err != nil {
		return fmt.Errorf("buildlog: %w", err)
	}
	if err := writeLines(p.log, end, lines); err != nil {
		return err
	}
	if err := appendIndex(p.idx, end); err != nil {
		return err
	}
	f.watches.notify(orgID + "/" + buildID)
	return nil
}

// writeLines writes lines numbered from at.seq at byte offset at.off, dropping whatever follows
// it (a line half written when the process died).
func writeLines(path string, at position, lines []kiln.LogLine) error {
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("buildlog: %w", err)
	}
	defer file.Close()
	if fi, err := file.Stat(); err != nil {
		return fmt.Errorf("buildlog: %w", err)
	} else if fi.Size() > at.off {
		if err := file.Truncate(at.off); err != nil {
			return fmt.Errorf("buildlog: %w", err)
		}
	}
	if _, err := file.Seek(at.off, io.SeekStart); err != nil {
		return fmt.Errorf("buildlog: %w", err)
	}
	w := bufio.NewWriter(file)
	enc := json.NewEncoder(w)
	for i, l := range lines {
		if err := enc.Encode(record{S: at.seq + int64(i), T: l.Time.UnixMilli(), L: l.Level, M: l.Message}); err != nil {
			return fmt.Errorf("buildlog: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("buildlog: %w", err)
	}
	return nil
}

// end returns where the next line goes: its sequence number and byte offset.
func (f *Files) end(ctx context.Context, p paths) (position, error) {
	start, err := lastIndexed(p.idx)
	if err != nil {
		return position{}, err
	}
	return scanFrom(ctx, p.log, start, func(Line) bool { return true })
}

// Read returns up to max lines from sequence number from on, in order and without gaps: it stops
// at the end of what is written, or before a missing number.
func (f *Files) Read(ctx context.Context, orgID, buildID string, from int64, max int) ([]Line, error) {
	p, err := f.paths(orgID, buildID)
	if err != nil {
		return nil, err
	}
	from, max = readBounds(from, max)
	if f.expired(buildID) {
		return nil, f.Delete(ctx, orgID, buildID)
	}
	start, err := indexedAtOrBefore(p.idx, from)
	if err != nil {
		return nil, err
	}
	var out []Line
	_, err = scanFrom(ctx, p.log, start, func(l Line) bool {
		switch {
		case l.Seq < from:
			return true
		case l.Seq != from+int64(len(out)):
			return false
		}
		out = append(out, l)
		return len(out) < max
	})
	return out, err
}

// readBounds puts a read's start and size in range: from at least 1, max 1 to MaxRead.
func readBounds(from int64, max int) (int64, int) {
	return maxOf(from, 1), min(maxOf(max, 1), MaxRead)
}

func maxOf[T int | int64](a, b T) T {
	if a > b {
		return a
	}
	return b
}

// MaxRead is the most lines one Read returns.
const MaxRead = 1000

// Last returns the sequence number of the last line written, 0 for an empty or missing log.
func (f *Files) Last(ctx context.Context, orgID, buildID string) (int64, error) {
	p, err := f.paths(orgID, buildID)
	if err != nil {
		return 0, err
	}
	if f.expired(buildID) {
		return 0, f.Delete(ctx, orgID, buildID)
	}
	end, err := f.end(ctx, p)
	return end.seq - 1, err
}

// Watch returns a channel that receives after lines are appended to the build's log, and a
// function to stop watching. Appends while nobody reads the channel collapse into one signal.
func (f *Files) Watch(orgID, buildID string) (<-chan struct{}, func()) {
	return f.watches.watch(orgID + "/" + buildID)
}

// scanFrom reads the complete lines of a log file from a position, calling fn with each until
// it returns false, and returns the position of the first line not passed to fn (or the end). A
// missing file has no lines; a half-written last line is not read.
func scanFrom(ctx context.Context, path string, start position, fn func(Line) bool) (position, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return position{seq: 1}, nil
	}
	if err != nil {
		return start, fmt.Errorf("buildlog: %w", err)
	}
	defer file.Close()
	if fi, err := file.Stat(); err != nil {
		return start, fmt.Errorf("buildlog: %w", err)
	} else if start.off > fi.Size() {
		start = position{seq: 1} // an index ahead of its file: read it all
	}
	if _, err := file.Seek(start.off, io.SeekStart); err != nil {
		return start, fmt.Errorf("buildlog: %w", err)
	}
	r := bufio.NewReaderSize(file, 64<<10)
	pos := start
	for {
		b, err := r.ReadBytes('\n')
		if len(b) > 0 && b[len(b)-1] == '\n' {
			var rec record
			if json.Unmarshal(b, &rec) == nil {
				seq := pos.seq
				if rec.S != 0 {
					seq = rec.S
				}
				l := Line{Seq: seq, LogLine: kiln.LogLine{Time: time.UnixMilli(rec.T).UTC(), Level: rec.L, Message: rec.M}}
				if !fn(l) {
					return pos, nil
				}
				pos.seq = seq + 1
			}
			pos.off += int64(len(b))
		}
		if err == io.EOF {
			return pos, nil
		}
		if err != nil {
			return pos, fmt.Errorf("buildlog: %w", err)
		}
		if ctx.Err() != nil {
			return pos, ctx.Err()
		}
	}
}

// Delete removes a build's log.
func (f *Files) Delete(ctx context.Context, orgID, buildID string) error {
	p, err := f.paths(orgID, buildID)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, path := range []string{p.idx, p.log} {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("buildlog: %w", err)
		}
	}
	return nil
}
