package webhooks

import (
	"regexp"
	"strings"
)

// MaxSignatureHeader bounds the length of a webhook's extra signature header name.
const MaxSignatureHeader = 64

var signatureHeaderRe = regexp.MustCompile(`^X-[A-Za-z0-9][A-Za-z0-9-]*-Signature$`)

// CheckSignatureHeader says what is wrong with a name for a webhook's extra signature header
// ("" when it is fine): X-, then letters, digits and dashes, then -Signature (such as
// X-BuildPixel-Signature), at most MaxSignatureHeader characters, and none of kiln's own
// headers (X-Kiln-…), whatever their case.
func CheckSignatureHeader(name string) string {
	switch {
	case len(name) > MaxSignatureHeader || !signatureHeaderRe.MatchString(name):
		return "must be X-<Name>-Signature, letters, digits and dashes, at most 64 characters, e.g. X-BuildPixel-Signature"
	case strings.HasPrefix(strings.ToLower(name), "x-kiln-"):
		return "must not be one of kiln's own headers (X-Kiln-…): X-Kiln-Signature is always sent"
	}
	return ""
}
