package auth

import (
	"sync"
	"time"
)

// principalCache keeps the principals of API tokens (never of sessions) for a short time, so a busy client does not cost
// three store reads per request. Changes made through this process (a revoked token, an edited
// organization) are forgotten at once; changes made elsewhere (another Lambda instance) show
// within the cache's time to live.
type principalCache struct {
	mu      sync.Mutex
	entries map[string]cachedPrincipal
}

type cachedPrincipal struct {
	p       *Principal
	expires time.Time
}

// maxCachedPrincipals bounds the cache; past it, expired entries are swept, and if none are, the
// cache starts over.
const maxCachedPrincipals = 10_000

func (c *principalCache) get(hash string, now time.Time) *Principal {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hash]
	if !ok || now.After(e.expires) {
		return nil
	}
	return e.p
}

func (c *principalCache) put(hash string, p *Principal, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]cachedPrincipal{}
	}
	if len(c.entries) >= maxCachedPrincipals {
		for k, e := range c.entries {
			if expires.After(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxCachedPrincipals {
			c.entries = map[string]cachedPrincipal{}
		}
	}
	c.entries[hash] = cachedPrincipal{p: p, expires: expires}
}

// forget drops every cached principal that match selects.
func (c *principalCache) forget(match func(*Principal) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if match(e.p) {
			delete(c.entries, k)
		}
	}
}
