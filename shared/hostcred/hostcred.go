// Package hostcred makes and checks the per-build credentials of remote build hosts. A host that
// runs one build (a CodeBuild container, an EC2 Windows host, or a studio's agent that claimed it) gets one credential for that
// build; it names the build and carries 32 random bytes. The service keeps only its SHA-256 (on
// the build), so the credential cannot be read back, and it is good only while that build runs:
// once the build ends every call made with it is refused.
package hostcred

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// prefix starts every host credential, so a leaked one is recognizable (secret scanners) and
// cannot be mistaken for an API token.
const prefix = "kbh."

// ErrMalformed is a credential that is not one this package made.
var ErrMalformed = errors.New("hostcred: not a build host credential")

// New makes a credential for build id of organization orgID and returns it with its hash (what
// the store keeps).
func New(orgID, buildID string) (credential, hash string, err error) {
	if !validID(orgID) || !validID(buildID) {
		return "", "", errors.New("hostcred: organization and build ids must be non-empty and hold no dots")
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return "", "", err
	}
	credential = prefix + orgID + "." + buildID + "." + base64.RawURLEncoding.EncodeToString(secret[:])
	return credential, Hash(credential), nil
}

// Parse reads the organization and build a credential names. It checks the form only: Matches
// checks it against the stored hash.
func Parse(credential string) (orgID, buildID string, err error) {
	rest, ok := strings.CutPrefix(credential, prefix)
	if !ok {
		return "", "", ErrMalformed
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 || !validID(parts[0]) || !validID(parts[1]) {
		return "", "", ErrMalformed
	}
	secret, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(secret) != 32 {
		return "", "", ErrMalformed
	}
	return parts[0], parts[1], nil
}

// Hash is the SHA-256 (hex) of a credential.
func Hash(credential string) string {
	sum := sha256.Sum256([]byte(credential))
	return hex.EncodeToString(sum[:])
}

// Matches reports whether credential hashes to hash, in constant time. An empty hash (a build
// with no remote host) matches nothing.
func Matches(credential, hash string) bool {
	if hash == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(Hash(credential)), []byte(hash)) == 1
}

func validID(id string) bool {
	return id != "" && len(id) <= 64 && !strings.ContainsAny(id, ". \t\r\n")
}
