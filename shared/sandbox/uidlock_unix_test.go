//go:build unix

package sandbox

import (
	"os"
	"testing"
)

// TestUIDsHeldByAnotherProcessAreSkipped: a uid locked by another kiln process on the host (here a
// lock on its own open file, as another process's would be) is never handed out, and comes free
// when that process lets go (or dies: the kernel drops its lock).
func TestUIDsHeldByAnotherProcessAreSkipped(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("build uids are handed out only when kiln runs as root")
	}
	r := UIDRange{First: 201900, Last: 201901}
	otherUnlock, ok, err := lockUID(r.First)
	if err != nil || !ok {
		t.Fatalf("the other process's lock: %v, %v", ok, err)
	}
	uid, release, err := r.take()
	if err != nil {
		t.Fatal(err)
	}
	if uid != r.First+1 {
		t.Errorf("took uid %d, held by another process; want %d", uid, r.First+1)
	}
	if _, _, err := r.take(); err == nil {
		t.Error("took a uid while both are held")
	}
	otherUnlock()
	again, releaseAgain, err := r.take()
	if err != nil || again != r.First {
		t.Errorf("after the other process let go: uid %d, %v; want %d", again, err, r.First)
	}
	release()
	if releaseAgain != nil {
		releaseAgain()
	}
}
