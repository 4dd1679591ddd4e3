package kiln

import (
	"math/big"
	"strings"
	"testing"
	"time"
)

// idValue is the 144-bit number an id writes.
func idValue(id string) *big.Int {
	v := new(big.Int)
	for i := 0; i < len(id); i++ {
		v.Lsh(v, 6).Or(v, big.NewInt(int64(strings.IndexByte(idAlphabet, id[i]))))
	}
	return v
}

// TestIDsDrawFreshRandomBits makes ids in bursts and checks that each sorts after the one before
// yet tells nothing of it: it is not the previous id plus one, it differs in more than its last
// character, and its random bits are new.
func TestIDsDrawFreshRandomBits(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 4, 5, 6e6, time.UTC)
	cases := []struct {
		name string
		n    int
		when func(i int) time.Time
		// lastAt is the time the last id reads, up to lastAt+slack: a burst borrows
		// milliseconds, a clock stepping back does not take ids back in time.
		lastAt time.Time
		slack  time.Duration
	}{
		{"one millisecond", 1000, func(int) time.Time { return at }, at, 0},
		{"more than a millisecond's sequence", 3 << idSeqBits, func(int) time.Time { return at }, at, 5 * time.Millisecond},
		{"a clock stepping back", 1000, func(i int) time.Time { return at.Add(-time.Duration(i) * time.Millisecond) }, at, 0},
		{"a few per millisecond", 1000, func(i int) time.Time { return at.Add(time.Duration(i/3) * time.Millisecond) }, at.Add(333 * time.Millisecond), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g IDGenerator
			one := big.NewInt(1)
			randomParts := map[string]bool{}
			prev := ""
			for i := 0; i < c.n; i++ {
				id := g.New(c.when(i))
				if !ValidID(id) || id[0] != 'k' {
					t.Fatalf("id %q is not a kiln id", id)
				}
				random := id[IDLength-idRandomBits/6:]
				if randomParts[random] {
					t.Fatalf("id %q repeats random bits %q", id, random)
				}
				randomParts[random] = true
				if prev != "" {
					if prev >= id {
						t.Fatalf("ids out of creation order: %q then %q", prev, id)
					}
					if new(big.Int).Add(idValue(prev), one).Cmp(idValue(id)) == 0 {
						t.Fatalf("id %q is the one before plus one, %q", id, prev)
					}
					if prev[:IDLength-1] == id[:IDLength-1] {
						t.Fatalf("ids %q and %q differ only in their last character", prev, id)
					}
				}
				prev = id
			}
			if got, _ := IDTime(prev); got.Before(c.lastAt) || got.After(c.lastAt.Add(c.slack)) {
				t.Errorf("the last id reads %v, want %v up to %v later", got, c.lastAt, c.slack)
			}
		})
	}
}

// TestRequestIDsHaveTheirOwnGenerator checks that making request ids leaves the resource ids'
// generator as it was, so a request id tells nothing of the next resource id.
func TestRequestIDsHaveTheirOwnGenerator(t *testing.T) {
	state := func(g *IDGenerator) [2]uint64 {
		g.mu.Lock()
		defer g.mu.Unlock()
		return [2]uint64{g.lastMS, g.seq}
	}
	NewID()
	resources, requests := state(&defaultIDs), state(&requestIDs)
	for i := 0; i < 100; i++ {
		id := NewRequestID()
		if !strings.HasPrefix(id, "req_") || !ValidID(strings.TrimPrefix(id, "req_")) {
			t.Fatalf("request id %q is not req_ and a kiln id", id)
		}
	}
	if got := state(&defaultIDs); got != resources {
		t.Errorf("request ids moved the resource ids' generator from %v to %v", resources, got)
	}
	if got := state(&requestIDs); got == requests {
		t.Errorf("request ids left their generator at %v", got)
	}
}
