package buildcache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// ErrInvalidKey is wrapped by the error of every function given a key, build id or org id that
// cannot name a cache.
var ErrInvalidKey = errors.New("invalid build cache key")

// maxFieldLen bounds Ref, Platform and Engine.
const maxFieldLen = 1024

// objectSuffix ends the object key of every saved cache.
const objectSuffix = ".tar.zst"

// Key says which builds may share a cache: those of one project, on one ref (git branch or
// Perforce stream), for one target platform, with one engine version. Org and Project are kiln
// ids; Ref, Platform and Engine may hold any text (such as "feature/x", "//depot/main", "5.3").
type Key struct {
	Org      string
	Project  string
	Ref      string
	Platform string
	Engine   string
}

// Validate checks that every field is set: Org and Project are kiln ids, and Ref, Platform and
// Engine are non-empty UTF-8 of at most 1024 bytes without NUL.
func (k Key) Validate() error {
	if !kiln.ValidID(k.Org) {
		return fmt.Errorf("%w: org %q is not a kiln id", ErrInvalidKey, k.Org)
	}
	if !kiln.ValidID(k.Project) {
		return fmt.Errorf("%w: project %q is not a kiln id", ErrInvalidKey, k.Project)
	}
	for _, f := range []struct{ name, v string }{{"ref", k.Ref}, {"platform", k.Platform}, {"engine", k.Engine}} {
		if f.v == "" || len(f.v) > maxFieldLen || !utf8.ValidString(f.v) || strings.ContainsRune(f.v, 0) {
			return fmt.Errorf("%w: %s %q must be 1 to %d bytes of UTF-8 without NUL", ErrInvalidKey, f.name, f.v, maxFieldLen)
		}
	}
	return nil
}

// Prefix is the object-key prefix under which the caches of k are kept:
// "caches/<org>/<project>/<hash>/", where hash is a SHA-256 of Ref, Platform and Engine
// (each length-prefixed, so no two different triples share it). It is "" for an invalid key.
func (k Key) Prefix() string {
	if k.Validate() != nil {
		return ""
	}
	h := sha256.New()
	for _, f := range []string{k.Ref, k.Platform, k.Engine} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return projectPrefix(k.Org, k.Project) + hex.EncodeToString(h.Sum(nil)[:16]) + "/"
}

// String describes the key for logs.
func (k Key) String() string {
	return fmt.Sprintf("org %s project %s ref %q platform %q engine %q", k.Org, k.Project, k.Ref, k.Platform, k.Engine)
}

// OrgPrefix is the object-key prefix of every cache of org: "caches/<org>/". It is "" when org
// is not a kiln id. Since ids hold no "/", the prefix of one org never starts another's.
func OrgPrefix(org string) string {
	if !kiln.ValidID(org) {
		return ""
	}
	return "caches/" + org + "/"
}

func projectPrefix(org, project string) string { return OrgPrefix(org) + project + "/" }

// ObjectKey is the key of the object holding the cache of k that build buildID saved:
// "<prefix><buildID>.tar.zst". A host that uploads with a presigned URL puts it there.
func ObjectKey(k Key, buildID string) (string, error) {
	if err := k.Validate(); err != nil {
		return "", err
	}
	if !kiln.ValidID(buildID) {
		return "", fmt.Errorf("%w: build %q is not a kiln id", ErrInvalidKey, buildID)
	}
	return k.Prefix() + buildID + objectSuffix, nil
}

// buildOf is the build id in the object key of a cache directly under prefix; false for any
// other key.
func buildOf(prefix, objectKey string) (string, bool) {
	rest, ok := strings.CutPrefix(objectKey, prefix)
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, objectSuffix)
	return id, ok && kiln.ValidID(id)
}
