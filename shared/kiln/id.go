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

// An id's 144 bits after its marker: milliseconds, then a sequence within the millisecond, then
// fresh random bits.
const (
	idTimeBits   = 42
	idSeqBits    = 12
	idRandomBits = 96 - idSeqBits // 84
	// idSeqStart bounds where a millisecond's sequence starts (at random, below it), leaving at
	// least that many ids before the sequence runs out.
	idSeqStart = 1 << (idSeqBits - 1)
)

// IDGenerator makes 24-character ids: a fixed first character ("k", so an id never starts with
// "-" and is never taken for a command-line option), 42 bits of milliseconds since the Unix epoch
// (enough until 2109), a 12-bit sequence, then 84 bits drawn fresh from crypto/rand for every id.
//
// Ids made by one generator sort by creation: the first id of a millisecond starts its sequence
// at a random value below 2048, each further id of that millisecond takes the next value. When a
// millisecond's sequence runs out, or the clock steps back, the generator goes on in the last
// millisecond it used plus one, so IDTime may be a few milliseconds late under a burst. One id
// tells nothing of the random bits of the next: only its sequence follows.
type IDGenerator struct {
	mu     sync.Mutex
	lastMS uint64
	seq    uint64
}

var (
	// defaultIDs makes the ids of kiln's resources.
	defaultIDs IDGenerator
	// requestIDs makes request ids, which anyone may see (unauthenticated requests get one
	// too): a generator of their own, so they tell nothing of resource ids made at the same time.
	requestIDs IDGenerator
)

// NewID returns a new resource id made now.
func NewID() string { return defaultIDs.New(time.Now()) }

// NewRequestID returns a new request id made now, "req_" and an id from a generator that makes
// nothing else.
func NewRequestID() string { return "req_" + requestIDs.New(time.Now()) }

// New returns an id for time t.
func (g *IDGenerator) New(t time.Time) string {
	var random [12]byte
	_, _ = rand.Read(random[:]) // crypto/rand.Read never fails: it crashes the program instead
	// The sequence overwrites the first 12 random bits: they pick where a new millisecond's
	// sequence starts.
	ms, seq := g.next(uint64(t.UnixMilli()), uint64(random[0])<<4|uint64(random[1]>>4))

	var raw [18]byte
	binary.BigEndian.PutUint64(raw[:8], (idMarker<<idTimeBits|ms&(1<<idTimeBits-1))<<16)
	copy(raw[6:], random[:])
	raw[6] = byte(seq >> 4)
	raw[7] = byte(seq)<<4 | raw[7]&0x0f
	return encodeID(raw)
}

// next returns the millisecond and sequence of the id after the last one, for a clock reading
// ms; seed picks where a new millisecond's sequence starts.
func (g *IDGenerator) next(ms, seed uint64) (uint64, uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case ms > g.lastMS:
		g.lastMS, g.seq = ms, seed%idSeqStart
	case g.seq+1 < 1<<idSeqBits:
		g.seq++
	default: // the sequence ran out: borrow the next millisecond
		g.lastMS, g.seq = g.lastMS+1, seed%idSeqStart
	}
	return g.lastMS, g.seq
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
	return time.UnixMilli(int64(v & (1<<idTimeBits - 1))).UTC(), true
}
