package buildlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Expired reports whether the log of build buildID has passed its retention at now: a build's
// log is kept for retention from the build's creation (read from its id), as long as its
// artifact; 0 keeps logs for ever.
func Expired(buildID string, retention time.Duration, now time.Time) bool {
	if retention <= 0 {
		return false
	}
	created, ok := kiln.IDTime(buildID)
	return ok && !now.Before(created.Add(retention))
}

// SetRetention makes the store keep a build's log for retention from the build's creation: an
// expired log reads as empty and is deleted when read and by DeleteExpired. now is the clock
// (nil: time.Now).
func (f *Files) SetRetention(retention time.Duration, now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.retention, f.now = retention, now
}

// expired reports whether the build's log has passed the store's retention.
func (f *Files) expired(buildID string) bool {
	f.mu.Lock()
	retention, now := f.retention, f.now
	f.mu.Unlock()
	if now == nil {
		now = time.Now
	}
	return Expired(buildID, retention, now())
}

// DeleteExpired deletes every log past the store's retention (the retention janitor's sweep)
// and says how many.
func (f *Files) DeleteExpired(ctx context.Context) (int, error) {
	orgs, err := os.ReadDir(f.dir)
	if err != nil {
		return 0, fmt.Errorf("buildlog: %w", err)
	}
	deleted := 0
	for _, org := range orgs {
		if !org.IsDir() || !kiln.ValidID(org.Name()) {
			continue
		}
		logs, err := os.ReadDir(filepath.Join(f.dir, org.Name()))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return deleted, fmt.Errorf("buildlog: %w", err)
		}
		for _, l := range logs {
			id, ok := strings.CutSuffix(l.Name(), ".jsonl")
			if !ok || !kiln.ValidID(id) || !f.expired(id) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return deleted, err
			}
			if err := f.Delete(ctx, org.Name(), id); err != nil {
				return deleted, err
			}
			deleted++
		}
	}
	return deleted, nil
}
