// Package artifacts defines where build artifacts (.tar.gz files) are kept: the Store interface
// that builds write to and downloads read from, and the rules for artifact keys. Implementations:
// fsartifacts (files on this machine); every implementation passes artifactstest.Run.
package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Store keeps artifacts by key. Keys are slash-separated paths such as
// "k123/b456.tar.gz" (see ValidateKey). All methods are safe for concurrent use.
type Store interface {
	// Put stores an artifact under key: write streams its bytes into w. The artifact becomes
	// visible only after write returned nil and the data is durable; on any error (from write,
	// from the store, or ctx being done) nothing is left behind and an artifact previously stored
	// under key is unchanged. Put replaces an existing artifact.
	Put(ctx context.Context, key string, write func(w io.Writer) error) error
	// Open opens an artifact for reading, with its size and modification time;
	// kiln.NotFound("artifact") when absent. The caller closes it.
	Open(ctx context.Context, key string) (Object, error)
	// Delete removes an artifact; a missing one is not an error.
	Delete(ctx context.Context, key string) error
}

// Object is an open artifact.
type Object interface {
	io.ReadSeekCloser
	Size() int64
	ModTime() time.Time
}

// ErrInvalidKey is wrapped by the error of every method given a key that ValidateKey refuses.
var ErrInvalidKey = errors.New("invalid artifact key")

// MaxKeyLen is the longest key accepted (S3 allows 1024 bytes).
const MaxKeyLen = 1024

// ValidateKey checks that key is a relative slash-separated path of segments made of
// [A-Za-z0-9._-] only, none empty and none starting with a dot (so no "." or "..", and no clash
// with a store's temporary files).
func ValidateKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return fmt.Errorf("%w %q: empty or longer than %d bytes", ErrInvalidKey, key, MaxKeyLen)
	}
	for _, c := range []byte(key) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/'
		if !ok {
			return fmt.Errorf("%w %q: only A-Z a-z 0-9 . _ - / are allowed", ErrInvalidKey, key)
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg[0] == '.' {
			return fmt.Errorf("%w %q: a segment is empty or starts with a dot", ErrInvalidKey, key)
		}
	}
	return nil
}
