package buildcache

import (
	"context"
	"fmt"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// cachesRoot is the prefix of every organization's caches.
const cachesRoot = "caches/"

// ProjectRef names a project that has caches in the store.
type ProjectRef struct {
	Org     string
	Project string
}

// Projects lists the projects that have at least one object under their caches, each once, in
// key order (objects whose key names no org and project id are not listed).
func (c *Cache) Projects(ctx context.Context) ([]ProjectRef, error) {
	infos, err := c.store.List(ctx, cachesRoot)
	if err != nil {
		return nil, fmt.Errorf("build cache: list %s: %w", cachesRoot, err)
	}
	var out []ProjectRef
	for _, in := range infos {
		parts := strings.SplitN(strings.TrimPrefix(in.Key, cachesRoot), "/", 3)
		if len(parts) < 3 || !kiln.ValidID(parts[0]) || !kiln.ValidID(parts[1]) {
			continue
		}
		ref := ProjectRef{Org: parts[0], Project: parts[1]}
		if n := len(out); n == 0 || out[n-1] != ref {
			out = append(out, ref)
		}
	}
	return out, nil
}
