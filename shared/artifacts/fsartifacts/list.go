package fsartifacts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kilnbuild/kiln/shared/artifacts"
)

// List returns the artifacts whose keys start with prefix ("" for all), sorted by key. It walks
// only the directory the prefix names; files being written (Put in progress) are not listed.
func (s *Store) List(ctx context.Context, prefix string) ([]artifacts.Info, error) {
	if err := artifacts.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	start := s.dir
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = filepath.Join(s.dir, filepath.FromSlash(prefix[:i]))
	}
	var out []artifacts.Info
	err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // no such directory, or removed while walking
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if path == start {
			if !d.IsDir() {
				return fs.SkipAll
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") { // partial files; never part of a key
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(s.dir, path)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if d.IsDir() {
			// Descend only where keys may still start with prefix.
			if !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasPrefix(key, prefix) {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) { // deleted while listing
			return nil
		}
		if err != nil {
			return err
		}
		out = append(out, artifacts.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list artifacts %q: %w", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
