package buildsteps

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// removeDirLinks removes every symbolic link under ws (never following one) that leads to a
// directory, and returns how many it removed. A Perforce sync runs as kiln and writes each file
// by its path: a directory of the workspace that a build replaced with a link would take the
// sync's writes wherever it points (another workspace, the engine). A link that leads to a file
// is left: the sync replaces a file it rewrites rather than writing through it, and a directory
// link is all that could redirect a path beneath it.
func removeDirLinks(ws string) (int, error) {
	removed := 0
	err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			return nil // a link to a file, or to nothing
		}
		if err := os.Remove(p); err != nil {
			return err
		}
		removed++
		return nil
	})
	return removed, err
}
