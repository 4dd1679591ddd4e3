// Package manifest is the size report of a build: the list of the files its artifact holds, with
// their sizes, kept beside the artifact in the artifact store, and the difference between two
// such lists.
package manifest

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Entry is one regular file of an artifact: its path below the artifact's top directory
// ("Game/Content/Paks/pakchunk0-Linux.pak") and its size in bytes.
type Entry struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// Key is the artifact-store key of the manifest of the artifact stored under artifactKey:
// "<org>/<build>.tar.gz" → "<org>/<build>.manifest.json.gz".
func Key(artifactKey string) string {
	return strings.TrimSuffix(artifactKey, ".tar.gz") + ".manifest.json.gz"
}

// Sort orders entries by path, as Write expects.
func Sort(entries []Entry) {
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
}

// Write writes entries (sorted by path) to w as a gzip-compressed JSON array.
func Write(w io.Writer, entries []Entry) error {
	if entries == nil {
		entries = []Entry{}
	}
	z := gzip.NewWriter(w)
	if err := json.NewEncoder(z).Encode(entries); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := z.Close(); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// MaxBytes bounds a manifest's JSON once decompressed (about a million files), so that a
// manifest cannot make its reader hold more than that.
const MaxBytes = 128 << 20

// ErrInvalid is wrapped by Read's error for a manifest that is not one Write wrote.
var ErrInvalid = errors.New("invalid manifest")

// Read reads a manifest that Write wrote; it checks that paths are sorted, unique and sizes not
// negative.
func Read(r io.Reader) ([]Entry, error) {
	z, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	defer z.Close()
	lr := &io.LimitedReader{R: z, N: MaxBytes + 1}
	var entries []Entry
	if err := json.NewDecoder(lr).Decode(&entries); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if lr.N <= 0 {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrInvalid, MaxBytes)
	}
	for i, e := range entries {
		if e.Path == "" || e.Size < 0 || i > 0 && entries[i-1].Path >= e.Path {
			return nil, fmt.Errorf("%w: entry %d (%q) is empty, negative or out of order", ErrInvalid, i, e.Path)
		}
	}
	return entries, nil
}
