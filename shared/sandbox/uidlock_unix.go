//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// uidLockDirs are where build uids are locked across processes, the first that can be made: one
// directory for every kiln on the host (kiln serve, kiln agent, test binaries), so that two kiln
// processes never run builds as the same uid (a step's end kills every process of its uid).
var uidLockDirs = []string{"/run/kiln-build-uids", filepath.Join(os.TempDir(), "kiln-build-uids")}

// lockUID holds uid for this process until unlock: an exclusive flock on the uid's file, which
// the kernel drops if the process dies. ok is false when another process holds it.
func lockUID(uid int) (unlock func(), ok bool, err error) {
	var lastErr error
	for _, dir := range uidLockDirs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			lastErr = err
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(uid)+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			lastErr = err
			continue
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if err == syscall.EWOULDBLOCK {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("sandbox: lock build uid %d: %w", uid, err)
		}
		return func() { f.Close() }, true, nil
	}
	return nil, false, fmt.Errorf("sandbox: no directory to lock build uids in: %w", lastErr)
}
