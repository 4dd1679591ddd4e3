package live

import (
	"crypto/rand"
	"encoding/hex"
)

// newToken returns a random id (leases, socket ids).
func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
