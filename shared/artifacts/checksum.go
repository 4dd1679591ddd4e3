package artifacts

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
)

// Opener opens stored artifacts (a Store).
type Opener interface {
	Open(ctx context.Context, key string) (Object, error)
}

// ReadMD5 reads the stored artifact under key to its end and answers its size and MD5 (lower-case
// hex): what is stored, measured by the service itself, whatever a host said it sent.
func ReadMD5(ctx context.Context, st Opener, key string) (size int64, sum string, err error) {
	obj, err := st.Open(ctx, key)
	if err != nil {
		return 0, "", err
	}
	defer obj.Close()
	h := md5.New()
	n, err := io.Copy(h, obj)
	if err != nil {
		return 0, "", fmt.Errorf("read artifact %s for its MD5: %w", key, err)
	}
	if n != obj.Size() {
		return 0, "", fmt.Errorf("read artifact %s for its MD5: read %d of its %d bytes", key, n, obj.Size())
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}
