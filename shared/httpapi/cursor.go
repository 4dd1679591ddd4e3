package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// cursors makes opaque page cursors. A cursor carries the last key of a page and an HMAC that
// binds it to the organization and to the list with its filters, so a cursor cannot be forged,
// altered, or reused for another caller or another query.
type cursors struct {
	key []byte
}

const cursorVersion = "c1"

func (c cursors) sign(orgID, query, after string) []byte {
	m := hmac.New(sha256.New, c.key)
	for _, part := range []string{cursorVersion, orgID, query, after} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return m.Sum(nil)[:18]
}

// encode returns the cursor for the page after `after`, or nil when there is no next page.
func (c cursors) encode(orgID, query, after string) *string {
	if after == "" {
		return nil
	}
	enc := base64.RawURLEncoding
	s := cursorVersion + "." + enc.EncodeToString([]byte(after)) + "." + enc.EncodeToString(c.sign(orgID, query, after))
	return &s
}

// decode checks a cursor and returns the key it carries.
func (c cursors) decode(orgID, query, cursor string) (string, error) {
	bad := kiln.FieldError(kiln.EValidation, "the cursor is not one this list issued", "cursor", "not a cursor of this list")
	parts := strings.Split(cursor, ".")
	if len(parts) != 3 || parts[0] != cursorVersion {
		return "", bad
	}
	enc := base64.RawURLEncoding
	after, err1 := enc.DecodeString(parts[1])
	sig, err2 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || !hmac.Equal(sig, c.sign(orgID, query, string(after))) {
		return "", bad
	}
	return string(after), nil
}
