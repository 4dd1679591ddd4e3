package artifacts

import (
	"fmt"
	"time"
)

// Info describes one stored artifact, as a listing returns it.
type Info struct {
	Key  string
	Size int64
	// ModTime is when the artifact was stored; it may be more precise than the opened Object's
	// (S3 lists milliseconds, its HEAD answers whole seconds).
	ModTime time.Time
}

// ValidatePrefix checks a key prefix given to a listing: "" (everything), or the start of a
// valid key, such as "caches/k1/" or "caches/k1/b".
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := ValidateKey(prefix + "x"); err != nil {
		return fmt.Errorf("%w: prefix %q cannot start a valid key", ErrInvalidKey, prefix)
	}
	return nil
}
