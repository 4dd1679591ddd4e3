package buildcache

import (
	"context"
	"errors"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/nofollow"
)

// BaseKey is the key a build falls back to, read-only, when its own key has no cache yet: the
// project's default branch (a Perforce project's stream) for the same platform and engine
// version, as a CI cache falls back to the base branch. A new feature branch so starts warm from
// main's cache, and still saves only to its own key. False when the build is of that ref itself,
// or the project names none.
func BaseKey(b *kiln.Build, p *kiln.Project) (Key, bool) {
	if p == nil || p.ID != b.ProjectID || p.OrganizationID != b.OrganizationID {
		return Key{}, false
	}
	ref := p.DefaultBranch
	if p.SourceControl == kiln.SourcePerforce {
		ref = p.StreamPath
	}
	k := KeyOf(b)
	if ref == "" || ref == k.Ref {
		return Key{}, false
	}
	k.Ref = ref
	return k, k.Validate() == nil
}

// RestoreFor restores the newest cache of b's own key into root or, when it has none, that of
// its BaseKey; it returns the entry and the ref whose cache it was. ErrNoCache when neither has
// one.
func (c *Cache) RestoreFor(ctx context.Context, b *kiln.Build, p *kiln.Project, root *nofollow.Dir) (Entry, string, Stats, error) {
	key := KeyOf(b)
	e, st, err := c.Restore(ctx, key, root)
	if !errors.Is(err, ErrNoCache) {
		return e, key.Ref, st, err
	}
	base, ok := BaseKey(b, p)
	if !ok {
		return e, key.Ref, st, err
	}
	e, st, berr := c.Restore(ctx, base, root)
	if errors.Is(berr, ErrNoCache) {
		return e, key.Ref, st, err // say the build's own key has none
	}
	return e, base.Ref, st, berr
}
