package buildcache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/nofollow"
)

var (
	// ErrNoCache is wrapped by Restore's error when no cache matches the key.
	ErrNoCache = errors.New("no build cache")
	// ErrNotStored is wrapped by Saved's error when the cache is not in the store: never
	// uploaded, or already replaced by a newer cache of the key.
	ErrNotStored = errors.New("build cache not stored, or already replaced by a newer one")
)

// Lister lists stored objects by key prefix, sorted by key (fsartifacts.Store and
// s3artifacts.Store implement it).
type Lister interface {
	List(ctx context.Context, prefix string) ([]artifacts.Info, error)
}

// Store is where caches are kept: an artifacts.Store that can list.
type Store interface {
	artifacts.Store
	Lister
}

// Entry is one saved cache.
type Entry struct {
	ObjectKey string
	BuildID   string // the build that saved it
	Size      int64  // compressed bytes
	ModTime   time.Time
}

// Usage is what the caches of an organization hold.
type Usage struct {
	Bytes int64
	Count int
}

// Cache saves and restores the build caches of projects in a store.
type Cache struct {
	store Store
	dirs  []string
}

// New returns the cache that keeps the directories dirs of projects (nil: DefaultDirs) in store.
func New(store Store, dirs []string) (*Cache, error) {
	if dirs == nil {
		dirs = DefaultDirs
	}
	if err := checkDirs(dirs); err != nil {
		return nil, err
	}
	return &Cache{store: store, dirs: slices.Clone(dirs)}, nil
}

// Dirs are the directories of a project that the cache holds.
func (c *Cache) Dirs() []string { return slices.Clone(c.dirs) }

// entries lists the caches of key, oldest first.
func (c *Cache) entries(ctx context.Context, key Key) ([]Entry, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	prefix := key.Prefix()
	infos, err := c.store.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("build cache: list %s: %w", key, err)
	}
	var out []Entry
	for _, in := range infos {
		if id, ok := buildOf(prefix, in.Key); ok {
			out = append(out, Entry{ObjectKey: in.Key, BuildID: id, Size: in.Size, ModTime: in.ModTime})
		}
	}
	slices.SortFunc(out, oldestFirst)
	return out, nil
}

// oldestFirst orders entries by time, then by key (build ids grow with time), so that entries
// stored within one clock tick still have one order.
func oldestFirst(a, b Entry) int {
	if c := a.ModTime.Compare(b.ModTime); c != 0 {
		return c
	}
	return cmp.Compare(a.ObjectKey, b.ObjectKey)
}

// Latest is the newest cache of key; false when there is none.
func (c *Cache) Latest(ctx context.Context, key Key) (Entry, bool, error) {
	es, err := c.entries(ctx, key)
	if err != nil || len(es) == 0 {
		return Entry{}, false, err
	}
	return es[len(es)-1], true, nil
}

// Restore replaces the cached directories of the project in root with the newest cache of key.
// An error means the build runs cold: ErrNoCache when there is none, or why the cache could not
// be listed or opened (in both cases the directories are left as they are), or why it could not
// be read (the directories are then removed, see Read).
func (c *Cache) Restore(ctx context.Context, key Key, root *nofollow.Dir) (Entry, Stats, error) {
	e, ok, err := c.Latest(ctx, key)
	if err != nil {
		return Entry{}, Stats{}, err
	}
	if !ok {
		return Entry{}, Stats{}, fmt.Errorf("%w for %s", ErrNoCache, key)
	}
	obj, err := c.store.Open(ctx, e.ObjectKey)
	if kiln.IsCode(err, kiln.ENotFound) { // replaced by a newer one since listed
		return e, Stats{}, fmt.Errorf("%w for %s: %s was removed", ErrNoCache, key, e.ObjectKey)
	}
	if err != nil {
		return e, Stats{}, fmt.Errorf("build cache: open %s: %w", e.ObjectKey, err)
	}
	defer obj.Close()
	st, err := Read(ctx, obj, root, c.dirs)
	if err != nil {
		return e, st, fmt.Errorf("build cache %s: %w", e.ObjectKey, err)
	}
	return e, st, nil
}

// Save stores the cached directories of the project in root as the cache of key saved by build
// buildID, then removes the older caches of key (Saved). Call it after a successful build.
func (c *Cache) Save(ctx context.Context, key Key, buildID string, root *nofollow.Dir) (Entry, Stats, error) {
	objectKey, err := ObjectKey(key, buildID)
	if err != nil {
		return Entry{}, Stats{}, err
	}
	var st Stats
	var size int64
	err = c.store.Put(ctx, objectKey, func(w io.Writer) error {
		cw := &countingWriter{w: w}
		var err error
		st, err = Write(ctx, cw, root, c.dirs)
		size = cw.n
		return err
	})
	if err != nil {
		return Entry{}, st, fmt.Errorf("build cache: save %s: %w", objectKey, err)
	}
	e, err := c.Saved(ctx, key, buildID)
	if errors.Is(err, ErrNotStored) {
		// A concurrent save of a newer cache removed this one already: the newer one serves.
		return Entry{ObjectKey: objectKey, BuildID: buildID, Size: size, ModTime: time.Now()}, st, nil
	}
	return e, st, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Saved removes the caches of key older than the one build buildID saved, which it returns. Save
// calls it; a host that uploaded the archive itself (Write to a presigned PUT of ObjectKey) has
// the server call it afterwards. Caches saved later by other builds are kept, so of concurrent
// saves the newest survives.
func (c *Cache) Saved(ctx context.Context, key Key, buildID string) (Entry, error) {
	objectKey, err := ObjectKey(key, buildID)
	if err != nil {
		return Entry{}, err
	}
	es, err := c.entries(ctx, key)
	if err != nil {
		return Entry{}, err
	}
	i := slices.IndexFunc(es, func(e Entry) bool { return e.ObjectKey == objectKey })
	if i < 0 {
		return Entry{}, fmt.Errorf("%w: %s", ErrNotStored, objectKey)
	}
	for _, old := range es[:i] {
		if err := c.store.Delete(ctx, old.ObjectKey); err != nil {
			return es[i], fmt.Errorf("build cache: remove the older %s: %w", old.ObjectKey, err)
		}
	}
	return es[i], nil
}

// orgEntries lists every object under the caches of org, oldest first (also objects that are not
// caches, so that Usage and Evict account for all the org's bytes).
func (c *Cache) orgEntries(ctx context.Context, prefix string) ([]Entry, error) {
	infos, err := c.store.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("build cache: list %s: %w", prefix, err)
	}
	out := make([]Entry, 0, len(infos))
	for _, in := range infos {
		e := Entry{ObjectKey: in.Key, Size: in.Size, ModTime: in.ModTime}
		if i := len(in.Key) - len(objectSuffix) - kiln.IDLength; i >= 0 {
			e.BuildID, _ = buildOf(in.Key[:i], in.Key)
		}
		out = append(out, e)
	}
	slices.SortFunc(out, oldestFirst)
	return out, nil
}

func orgPrefix(org string) (string, error) {
	p := OrgPrefix(org)
	if p == "" {
		return "", fmt.Errorf("%w: org %q is not a kiln id", ErrInvalidKey, org)
	}
	return p, nil
}

// Usage is what the caches of org hold in the store.
func (c *Cache) Usage(ctx context.Context, org string) (Usage, error) {
	prefix, err := orgPrefix(org)
	if err != nil {
		return Usage{}, err
	}
	es, err := c.orgEntries(ctx, prefix)
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	for _, e := range es {
		u.Bytes += e.Size
		u.Count++
	}
	return u, nil
}

// Evict removes the oldest caches of org until they hold at most maxBytes, never the object
// keep (the cache just saved; "" for none), and returns those it removed. If keep alone exceeds
// maxBytes, every other cache of the org is removed and keep stays.
func (c *Cache) Evict(ctx context.Context, org string, maxBytes int64, keep string) ([]Entry, error) {
	prefix, err := orgPrefix(org)
	if err != nil {
		return nil, err
	}
	if maxBytes < 0 {
		return nil, fmt.Errorf("build cache: negative size cap %d", maxBytes)
	}
	es, err := c.orgEntries(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, e := range es {
		total += e.Size
	}
	var removed []Entry
	for _, e := range es {
		if total <= maxBytes {
			break
		}
		if e.ObjectKey == keep {
			continue
		}
		if err := c.store.Delete(ctx, e.ObjectKey); err != nil {
			return removed, fmt.Errorf("build cache: evict %s: %w", e.ObjectKey, err)
		}
		total -= e.Size
		removed = append(removed, e)
	}
	return removed, nil
}

// DeleteProject removes every cache of a project (for retention, or when the project is
// deleted) and returns how many objects it removed.
func (c *Cache) DeleteProject(ctx context.Context, org, project string) (int, error) {
	prefix, err := orgPrefix(org)
	if err != nil {
		return 0, err
	}
	if !kiln.ValidID(project) {
		return 0, fmt.Errorf("%w: project %q is not a kiln id", ErrInvalidKey, project)
	}
	prefix = projectPrefix(org, project)
	infos, err := c.store.List(ctx, prefix)
	if err != nil {
		return 0, fmt.Errorf("build cache: list %s: %w", prefix, err)
	}
	for i, in := range infos {
		if err := c.store.Delete(ctx, in.Key); err != nil {
			return i, fmt.Errorf("build cache: delete %s: %w", in.Key, err)
		}
	}
	return len(infos), nil
}

// DeleteKey removes every cache of key (when no build setting builds it any more) and returns
// how many objects it removed.
func (c *Cache) DeleteKey(ctx context.Context, key Key) (int, error) {
	es, err := c.entries(ctx, key)
	if err != nil {
		return 0, err
	}
	for i, e := range es {
		if err := c.store.Delete(ctx, e.ObjectKey); err != nil {
			return i, fmt.Errorf("build cache: delete %s: %w", e.ObjectKey, err)
		}
	}
	return len(es), nil
}
