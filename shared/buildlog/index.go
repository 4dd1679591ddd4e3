package buildlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
)

// A log file's index (<buildID>.idx) has one entry per append: the sequence number of the
// append's first line and the byte offset where that line starts, 8 bytes each, big-endian.
// Entries are written after their lines, so an entry always points at a written line; an entry
// missing after a crash only makes a read start one chunk earlier. A log without an index (or
// written before indexes existed) is read from its start.

// position is where a line starts: its sequence number and byte offset.
type position struct{ seq, off int64 }

const indexEntry = 16

// appendIndex adds the entry of an append whose first line is at.
func appendIndex(path string, at position) error {
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("buildlog: index: %w", err)
	}
	var b [indexEntry]byte
	binary.BigEndian.PutUint64(b[:8], uint64(at.seq))
	binary.BigEndian.PutUint64(b[8:], uint64(at.off))
	_, err = file.Write(b[:])
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("buildlog: index: %w", err)
	}
	return nil
}

// index is an open index file.
type index struct {
	file *os.File
	n    int64 // complete entries
}

// openIndex opens an index; a missing one has no entries (and a nil file).
func openIndex(path string) (index, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return index{}, nil
	}
	if err != nil {
		return index{}, fmt.Errorf("buildlog: index: %w", err)
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return index{}, fmt.Errorf("buildlog: index: %w", err)
	}
	return index{file: file, n: fi.Size() / indexEntry}, nil
}

func (x index) close() {
	if x.file != nil {
		x.file.Close()
	}
}

func (x index) at(i int64) (position, error) {
	var b [indexEntry]byte
	if _, err := x.file.ReadAt(b[:], i*indexEntry); err != nil {
		return position{}, fmt.Errorf("buildlog: index: %w", err)
	}
	return position{seq: int64(binary.BigEndian.Uint64(b[:8])), off: int64(binary.BigEndian.Uint64(b[8:]))}, nil
}

// lastIndexed returns the start of the last indexed append, or the start of the file.
func lastIndexed(path string) (position, error) {
	x, err := openIndex(path)
	if err != nil || x.n == 0 {
		return position{seq: 1}, err
	}
	defer x.close()
	return x.at(x.n - 1)
}

// indexedAtOrBefore returns the start of the last append whose first line is at or before seq,
// or the start of the file; a binary search over the entries, which grow with seq.
func indexedAtOrBefore(path string, seq int64) (position, error) {
	x, err := openIndex(path)
	if err != nil || x.n == 0 {
		return position{seq: 1}, err
	}
	defer x.close()
	var readErr error
	// i is the first entry past seq.
	i := sort.Search(int(x.n), func(i int) bool {
		p, err := x.at(int64(i))
		if err != nil {
			readErr = err
			return true
		}
		return p.seq > seq
	})
	if readErr != nil {
		return position{}, readErr
	}
	if i == 0 {
		return position{seq: 1}, nil
	}
	return x.at(int64(i - 1))
}
