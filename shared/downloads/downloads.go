// Package downloads makes and checks the signed artifact URLs: the service's own address with an
// expiry and an HMAC, needing no Authorization header. The key lives with the service's state, so
// a URL stays valid across restarts until it expires.
package downloads

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// Lifetime is how long a signed URL works.
const Lifetime = 24 * time.Hour

// Signer signs artifact URLs under BaseURL.
type Signer struct {
	Key     []byte
	BaseURL string
}

func (s Signer) signature(orgID, buildID string, expires int64) string {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte("download\x00" + orgID + "\x00" + buildID + "\x00" + strconv.FormatInt(expires, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// URL returns the signed URL of a build's artifact that expires at `expires` (whole seconds).
func (s Signer) URL(orgID, buildID string, expires time.Time) string {
	exp := expires.Unix()
	return strings.TrimRight(s.BaseURL, "/") + "/downloads/" + orgID + "/" + buildID + ".tar.gz?expires=" +
		strconv.FormatInt(exp, 10) + "&signature=" + s.signature(orgID, buildID, exp)
}

// Valid reports whether signature signs (orgID, buildID, expires) and expires is not past now.
func (s Signer) Valid(orgID, buildID, expires, signature string, now time.Time) bool {
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || !hmac.Equal([]byte(signature), []byte(s.signature(orgID, buildID, exp))) {
		return false
	}
	return now.Unix() <= exp
}
