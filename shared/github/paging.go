package github

import (
	"cmp"
	"strings"
)

// Page sizes of Repos and Branches.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// compareNames orders names case-insensitively, then byte-wise so the order is total.
func compareNames(a, b string) int {
	if c := cmp.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// pageAfter returns up to limit items (sorted by compareNames of their key) that come after the
// key `after` (from the start when after is ""), and the key of the last item returned when more
// follow, else "". A cursor whose item has gone still works: the page starts after where it was.
func pageAfter[T any](items []T, key func(T) string, after string, limit int) ([]T, string) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	start := 0
	if after != "" {
		for start < len(items) && compareNames(key(items[start]), after) <= 0 {
			start++
		}
	}
	end := min(start+limit, len(items))
	next := ""
	if end < len(items) {
		next = key(items[end-1])
	}
	return items[start:end:end], next
}
