package s3artifacts

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/kilnbuild/kiln/shared/artifacts"
)

// Location is where a Store keeps artifacts: a bucket, and a key prefix ("" for none) put in
// front of every artifact key with a slash.
type Location struct {
	Bucket string
	Prefix string
}

// ParseURL reads s3://bucket or s3://bucket/prefix (the value of KILN_ARTIFACTS). The bucket
// follows S3's naming rules; the prefix follows the rules of artifact keys (artifacts.ValidateKey).
func ParseURL(s string) (Location, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "s3" || u.Opaque != "" {
		return Location{}, fmt.Errorf("%q is not an s3://bucket[/prefix] URL", s)
	}
	if u.User != nil || u.Port() != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return Location{}, fmt.Errorf("%q: an s3:// URL has only a bucket and a prefix (no user, port, query or fragment)", s)
	}
	if err := validBucket(u.Host); err != nil {
		return Location{}, fmt.Errorf("%q: %w", s, err)
	}
	loc := Location{Bucket: u.Host, Prefix: strings.TrimSuffix(strings.TrimPrefix(u.Path, "/"), "/")}
	if loc.Prefix != "" {
		if err := artifacts.ValidateKey(loc.Prefix); err != nil || len(loc.Prefix) > 512 {
			return Location{}, fmt.Errorf("%q: the prefix must be up to 512 bytes of segments made of A-Z a-z 0-9 . _ - , none empty or starting with a dot", s)
		}
	}
	return loc, nil
}

// String is the location as an s3:// URL.
func (l Location) String() string {
	if l.Prefix == "" {
		return "s3://" + l.Bucket
	}
	return "s3://" + l.Bucket + "/" + l.Prefix
}

// objectKey is the S3 key of an artifact key.
func (l Location) objectKey(key string) string {
	if l.Prefix == "" {
		return key
	}
	return l.Prefix + "/" + key
}

// validBucket applies S3's rules for general purpose bucket names: 3 to 63 lowercase letters,
// digits, dots and hyphens, starting and ending with a letter or digit, no two dots in a row.
func validBucket(b string) error {
	bad := len(b) < 3 || len(b) > 63 || strings.Contains(b, "..")
	for i := 0; i < len(b) && !bad; i++ {
		c := b[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		bad = !alnum && (c != '.' && c != '-' || i == 0 || i == len(b)-1)
	}
	if bad {
		return fmt.Errorf("bucket %q: a bucket name is 3 to 63 characters a-z 0-9 . - starting and ending with a letter or digit", b)
	}
	return nil
}
