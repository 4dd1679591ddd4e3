package iam

import (
	"net/http"
	"strings"
)

// KeyID returns the access key id a request is signed with: the Credential of its SigV4
// Authorization header, or the X-Amz-Credential of a presigned URL. Signatures are not verified
// (aws-local's callers are its own processes); the key says who calls.
func KeyID(r *http.Request) string {
	if auth := r.Header.Get("Authorization"); auth != "" {
		if _, rest, ok := strings.Cut(auth, "Credential="); ok {
			key, _, _ := strings.Cut(rest, "/")
			return strings.TrimSpace(key)
		}
		return ""
	}
	if cred := r.URL.Query().Get("X-Amz-Credential"); cred != "" {
		key, _, _ := strings.Cut(cred, "/")
		return key
	}
	return ""
}
