// Package buildlog keeps build logs: every line a build printed, with its time and level. On one
// machine they are files under KILN_DATA/logs, one per build, written as JSON lines.
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

// Files keeps logs as files: dir/<orgID>/<buildID>.jsonl.
type Files struct {
	dir string
	mu  sync.Mutex // serialises appends; lines of one build arrive from one runner anyway
}

// NewFiles keeps logs under dir.
func NewFiles(dir string) (*Files, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("buildlog: %w", err)
	}
	return &Files{dir: dir}, nil
}

type record struct {
	T int64         `json:"t"` // unix milliseconds
	L kiln.LogLevel `json:"l"`
	M string        `json:"m"`
}

func (f *Files) path(orgID, buildID string) (string, error) {
	if !kiln.ValidID(orgID) || !kiln.ValidID(buildID) {
		return "", fmt.Errorf("buildlog: bad id")
	}
	return filepath.Join(f.dir, orgID, buildID+".jsonl"), nil
}

// Append adds lines to a build's log.
func (f *Files) Append(ctx context.Context, orgID, buildID string, lines ...kiln.LogLine) error {
	p, err := f.path(orgID, buildID)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("buildlog: %w", err)
	}
	file, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("buildlog: %w", err)
	}
	defer file.Close()
	w := bufio.NewWriter(file)
	enc := json.NewEncoder(w)
	for _, l := range lines {
		if err := enc.Encode(record{T: l.Time.UnixMilli(), L: l.Level, M: l.Message}); err != nil {
			return fmt.Errorf("buildlog: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("buildlog: %w", err)
	}
	return nil
}

// Read calls fn for each line from byte offset `from`, and returns the offset after the last
// complete line read, to continue from. A log that does not exist yet has no lines.
func (f *Files) Read(ctx context.Context, orgID, buildID string, from int64, fn func(kiln.LogLine) error) (int64, error) {
	p, err := f.path(orgID, buildID)
	if err != nil {
		return from, err
	}
	file, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return from, nil
	}
	if err != nil {
		return from, fmt.Errorf("buildlog: %w", err)
	}
	defer file.Close()
	if _, err := file.Seek(from, io.SeekStart); err != nil {
		return from, fmt.Errorf("buildlog: %w", err)
	}
	r := bufio.NewReaderSize(file, 64<<10)
	offset := from
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var rec record
			if jerr := json.Unmarshal(line, &rec); jerr == nil {
				if ferr := fn(kiln.LogLine{Time: time.UnixMilli(rec.T).UTC(), Level: rec.L, Message: rec.M}); ferr != nil {
					return offset, ferr
				}
			}
			offset += int64(len(line))
		}
		if err == io.EOF {
			return offset, nil // a partial last line is read next time
		}
		if err != nil {
			return offset, fmt.Errorf("buildlog: %w", err)
		}
		if ctx.Err() != nil {
			return offset, ctx.Err()
		}
	}
}

// Tail returns the last n lines of a build's log. It reads from the end, so a long log costs no
// more than its last lines.
func (f *Files) Tail(ctx context.Context, orgID, buildID string, n int) ([]kiln.LogLine, error) {
	p, err := f.path(orgID, buildID)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("buildlog: %w", err)
	}
	for window := int64(64 << 10); ; window *= 4 {
		start := max(0, fi.Size()-window)
		if start > 0 {
			if start, err = nextLineStart(p, start); err != nil {
				return nil, err
			}
		}
		var lines []kiln.LogLine
		_, err := f.Read(ctx, orgID, buildID, start, func(l kiln.LogLine) error {
			lines = append(lines, l)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(lines) >= n || start == 0 {
			return lines[max(0, len(lines)-n):], nil
		}
	}
}

// nextLineStart returns the offset of the first line that starts at or after `from`.
func nextLineStart(path string, from int64) (int64, error) {
	file, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("buildlog: %w", err)
	}
	defer file.Close()
	if _, err := file.Seek(from-1, io.SeekStart); err != nil {
		return 0, fmt.Errorf("buildlog: %w", err)
	}
	skipped, err := bufio.NewReader(file).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return 0, fmt.Errorf("buildlog: %w", err)
	}
	return from - 1 + int64(len(skipped)), nil
}

// Delete removes a build's log.
func (f *Files) Delete(ctx context.Context, orgID, buildID string) error {
	p, err := f.path(orgID, buildID)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("buildlog: %w", err)
	}
	return nil
}
