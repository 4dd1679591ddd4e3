// Package auth issues API tokens and resolves a bearer token to the caller: user, organization
// and role. Only the SHA-256 of a token is ever stored.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TokenPrefix starts every kiln API token, so that secret scanners and people can recognise one.
const TokenPrefix = "kiln_"

// tokenAlphabet is base62: tokens survive copy-and-paste and shells without quoting.
const tokenAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// tokenRandomLength characters of base62 carry about 238 bits.
const tokenRandomLength = 40

// NewToken makes a token for a user: the secret to show once, and the record to store, which holds
// only the secret's hash.
func NewToken(orgID, userID, name string, now time.Time, ttl time.Duration) (secret string, t *kiln.Token) {
	secret, c := newCredential(TokenPrefix, orgID, name, now)
	t = &kiln.Token{Credential: c, UserID: userID}
	if ttl > 0 {
		exp := t.CreatedAt.Add(ttl)
		t.ExpiresAt = &exp
	}
	return secret, t
}

// newCredential makes a credential of the organization: a secret starting with prefix, to show
// once, and the record to store, which holds only the secret's hash and its first characters.
func newCredential(prefix, orgID, name string, now time.Time) (secret string, c kiln.Credential) {
	secret = prefix + randomString(tokenRandomLength)
	return secret, kiln.Credential{
		ID: kiln.NewID(), OrganizationID: orgID, Name: name,
		Hash: HashToken(secret), Hint: secret[:len(prefix)+4],
		CreatedAt: now.UTC().Truncate(time.Millisecond),
	}
}

// HashToken is how a token secret is kept and looked up: hex SHA-256.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// WellFormed reports whether s has the shape of a kiln token, so that malformed ones are refused
// without a store lookup.
func WellFormed(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	return ok && wellFormedRandom(rest)
}

func randomString(n int) string {
	// Rejection sampling keeps every character equally likely.
	out := make([]byte, 0, n)
	buf := make([]byte, n*2)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			panic("auth: crypto/rand failed: " + err.Error())
		}
		for _, b := range buf {
			if b < 248 { // 248 = 4 * 62
				out = append(out, tokenAlphabet[b%62])
				if len(out) == n {
					break
				}
			}
		}
	}
	return string(out)
}

// TriggerTokenPrefix starts every Perforce trigger token. It differs from TokenPrefix, so a
// trigger token is never taken for an API token, nor the other way round.
const TriggerTokenPrefix = "kilnp4_"

// NewTriggerToken makes an organization's Perforce trigger token: the secret to show once, and
// the record to store, which holds only the secret's hash.
func NewTriggerToken(orgID, createdBy, name string, now time.Time) (secret string, t *kiln.TriggerToken) {
	secret, c := newCredential(TriggerTokenPrefix, orgID, name, now)
	return secret, &kiln.TriggerToken{Credential: c, CreatedBy: createdBy}
}

// WellFormedTrigger reports whether s has the shape of a trigger token.
func WellFormedTrigger(s string) bool {
	rest, ok := strings.CutPrefix(s, TriggerTokenPrefix)
	return ok && wellFormedRandom(rest)
}

func wellFormedRandom(rest string) bool {
	if len(rest) != tokenRandomLength {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(tokenAlphabet, rest[i]) < 0 {
			return false
		}
	}
	return true
}

// AgentTokenPrefix starts every agent token (`kiln agent`), apart from API and trigger tokens.
const AgentTokenPrefix = "kagent_"

// NewAgent makes an organization's agent in pool: the token to show once, and the record to
// store, which holds only the token's hash.
func NewAgent(orgID, name, pool string, now time.Time) (secret string, a *kiln.Agent) {
	secret, c := newCredential(AgentTokenPrefix, orgID, name, now)
	return secret, &kiln.Agent{Credential: c, Pool: pool}
}

// WellFormedAgent reports whether s has the shape of an agent token.
func WellFormedAgent(s string) bool {
	rest, ok := strings.CutPrefix(s, AgentTokenPrefix)
	return ok && wellFormedRandom(rest)
}
