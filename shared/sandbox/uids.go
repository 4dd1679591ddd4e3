package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// UIDRange is the host uids kiln gives its builds when it runs as root (KILN_BUILD_UIDS): each
// running build has one of its own, used as both uid and gid, so no build ever runs as host root
// and no two running builds share a uid. The uids need no /etc/passwd entries; they must not
// belong to anyone else on the host.
type UIDRange struct{ First, Last int }

// DefaultUIDs is KILN_BUILD_UIDS's default: far above the uids Debian gives people (1000-59999),
// system services and nobody (65534).
var DefaultUIDs = UIDRange{First: 200000, Last: 200999}

// maxUID is the highest uid a range may hold: (uid_t)-1 means "no change" to chown and setuid.
const maxUID = 1<<32 - 2

// ParseUIDRange reads "FIRST-LAST" (or one uid) and checks it with Check.
func ParseUIDRange(s string) (UIDRange, error) {
	first, last, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		last = first
	}
	a, errA := strconv.Atoi(strings.TrimSpace(first))
	b, errB := strconv.Atoi(strings.TrimSpace(last))
	if errA != nil || errB != nil {
		return UIDRange{}, fmt.Errorf("%q is not a uid range such as 200000-200999", s)
	}
	r := UIDRange{First: a, Last: b}
	return r, r.Check(os.Geteuid())
}

// Check refuses a range that holds root, nobody or self (kiln's own uid), or is empty.
func (r UIDRange) Check(self int) error {
	switch {
	case r.First > r.Last:
		return fmt.Errorf("uid range %s is empty (the first uid is above the last)", r)
	case r.First <= 0:
		return fmt.Errorf("uid range %s holds uid 0 or a negative uid: builds must never run as root", r)
	case r.Last > maxUID:
		return fmt.Errorf("uid range %s goes past the highest uid %d", r, maxUID)
	case r.contains(65534):
		return fmt.Errorf("uid range %s holds 65534 (nobody), which other programs share", r)
	case r.contains(self):
		return fmt.Errorf("uid range %s holds kiln's own uid %d: a build could then reach kiln's files and processes", r, self)
	}
	return nil
}

func (r UIDRange) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

func (r UIDRange) contains(uid int) bool { return uid >= r.First && uid <= r.Last }

func (r UIDRange) orDefault() UIDRange {
	if r == (UIDRange{}) {
		return DefaultUIDs
	}
	return r
}

// uidsInUse are the build uids held by running steps, whatever range or confiner handed them out:
// two confiners of one process never give the same uid to two steps.
var uidsInUse = struct {
	sync.Mutex
	held map[int]bool
}{held: map[int]bool{}}

// errNoUID is the reason a build fails when every uid of the range is held.
var errNoUID = errors.New("every build uid is in use")

// take holds a free uid of the range for one step; release gives it back (once).
func (r UIDRange) take() (uid int, release func(), err error) {
	if err := r.Check(os.Geteuid()); err != nil {
		return 0, nil, fmt.Errorf("sandbox: KILN_BUILD_UIDS: %w", err)
	}
	uidsInUse.Lock()
	defer uidsInUse.Unlock()
	for u := r.First; u <= r.Last; u++ {
		if uidsInUse.held[u] {
			continue
		}
		// Another kiln process on the host (kiln agent beside kiln serve) may hold it too.
		unlock, ok, err := lockUID(u)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			continue
		}
		uidsInUse.held[u] = true
		var once sync.Once
		return u, func() {
			once.Do(func() {
				uidsInUse.Lock()
				delete(uidsInUse.held, u)
				uidsInUse.Unlock()
				unlock()
			})
		}, nil
	}
	return 0, nil, &Error{Reason: fmt.Sprintf("build sandbox: %v: all %d uids of KILN_BUILD_UIDS (%s) are held by running builds; widen the range",
		errNoUID, r.Last-r.First+1, r)}
}

// heldUIDs returns how many build uids running steps hold (for tests).
func heldUIDs() int {
	uidsInUse.Lock()
	defer uidsInUse.Unlock()
	return len(uidsInUse.held)
}
