package artifacts

import (
	"context"
	"time"
)

// MaxPresignLifetime is the longest a presigned URL of a Presigner may work.
const MaxPresignLifetime = 15 * time.Minute

// Presigner is implemented by stores whose artifacts clients can fetch from the storage itself
// (S3), so that a download is a redirect and no artifact byte passes through kiln. A store that
// does not implement it (files) is read with Open and streamed.
type Presigner interface {
	// PresignGet returns a URL that answers GET (and Range) with the artifact under key for
	// lifetime (at most MaxPresignLifetime), naming it filename when saved;
	// kiln.NotFound("artifact") when there is no such artifact.
	PresignGet(ctx context.Context, key, filename string, lifetime time.Duration) (string, error)
}
