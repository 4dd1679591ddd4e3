//go:build unix

package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ownerOf returns the host uid owning the one file called name under dir.
func OwnerOf(t *testing.T, dir, name string) int {
	t.Helper()
	owner := -1
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			owner = int(fi.Sys().(*syscall.Stat_t).Uid)
		}
		return err
	})
	if err != nil || owner < 0 {
		t.Fatalf("no %s under %s: %v", name, dir, err)
	}
	return owner
}
