package kiln

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"sync"
	"time"
)

// IDLength is the length of every id kiln hands out.
const IDLength = 24

// idAlphabet is URL-safe and in ASCII order, so that ids compare as strings in the order they were
// made.
const idAlphabet = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"

// idMarker is the value of an id's first character, "k".
const idMarker = 48

// IDGenerator makes 24-character ids: a fixed first character ("k", so an id never starts with
// "-" and is never taken for a command-line option), 42 bits of milliseconds since the Unix epoch
// (enough until 2109), then 96 bits of randomness. Ids made by one generator within the same
// millisecond increase by one, so they sort by creation order too.
type IDGenerator struct {
	mu       sync.Mutex
	lastMS   uint64
	lastRand [12]byte
}

var defaultIDs IDGenerator

// NewID returns a new id made now.
func NewID() string { return defaultIDs.New(time.Now()) }

// New returns an id for time t.
func (g *IDGenerator) New(t time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := uint64(t.UnixMilli())
	if ms <= g.lastMS {
		ms = g.lastMS
		increment(&g.lastRand)
	} else {
		g.lastMS = ms
		if _, err := rand.Read(g.lastRand[:]); err != nil {
			panic("kiln: crypto/rand failed: " + err.Error())
		}
		g.lastRand[0] &= 0x7f // leave room to increment without wrapping
	}
	var raw [18]byte
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], idMarker<<42|ms&(1<<42-1))
	copy(raw[:6], ts[2:])
	copy(raw[6:], g.lastRand[:])
	return encodeID(raw)
}

func increment(b *[12]byte) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return
		}
	}
}

// encodeID writes 18 bytes (144 bits) as 24 characters of 6 bits each, most significant first.
func encodeID(raw [18]byte) string {
	out := make([]byte, IDLength)
	for i := 0; i < 6; i++ { // 6 groups of 3 bytes -> 4 characters
		v := uint32(raw[3*i])<<16 | uint32(raw[3*i+1])<<8 | uint32(raw[3*i+2])
		out[4*i] = idAlphabet[v>>18&63]
		out[4*i+1] = idAlphabet[v>>12&63]
		out[4*i+2] = idAlphabet[v>>6&63]
		out[4*i+3] = idAlphabet[v&63]
	}
	return string(out)
}

// ValidID reports whether s has the form of a kiln id. Handlers use it to answer not_found early
// for ids that cannot exist.
func ValidID(s string) bool {
	if len(s) != IDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// IDTime is when the id was made (to the millisecond), read from its first eight characters;
// false for a string that is not a kiln id.
func IDTime(id string) (time.Time, bool) {
	if !ValidID(id) || id[0] != idAlphabet[idMarker] {
		return time.Time{}, false
	}
	var v uint64
	for i := 0; i < 8; i++ {
		v = v<<6 | uint64(strings.IndexByte(idAlphabet, id[i]))
	}
	return time.UnixMilli(int64(v & (1<<42 - 1))).UTC(), true
}
