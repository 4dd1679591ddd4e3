package builds

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// ClientKey is the Idempotency-Key a caller sent with a manual trigger, and who sent it: keys
// are the caller's own, so two callers never share one.
type ClientKey struct {
	UserID string
	Key    string
}

// ValidClientKey tells whether key may be an Idempotency-Key: at most 255 characters on one line.
func ValidClientKey(key string) bool {
	return len(key) <= 255 && !strings.ContainsAny(key, "\r\n")
}

// clientIdempotency is the idempotency key and fingerprint of a manual trigger sent with a
// client key. The fingerprint covers what was asked (caller, setting and overrides), so a
// different request under the same key is told apart.
func clientIdempotency(req TriggerRequest) (key, fingerprint string) {
	c := req.ClientKey
	asked := c.UserID + "\x00" + req.Setting.ID + "\x00" + req.Branch + "\x00" + req.Commit + "\x00" + req.Changelist
	if req.Clean {
		asked += "\x00clean" // absent otherwise, so the fingerprints of earlier requests stay the same
	}
	if req.RerunOf != "" {
		asked += "\x00rerun:" + req.RerunOf // likewise
	}
	sum := sha256.Sum256([]byte(asked))
	return "trigger:" + c.UserID + ":" + c.Key, hex.EncodeToString(sum[:])
}
