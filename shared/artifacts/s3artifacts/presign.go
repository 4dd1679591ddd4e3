package s3artifacts

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/artifacts"
)

// PresignGet implements artifacts.Presigner: a presigned GET of the object, valid for lifetime
// (1 second to artifacts.MaxPresignLifetime), whose answer is an attachment named filename of
// type application/gzip. It asks S3 for the object first, so that a deleted artifact is
// kiln.NotFound here rather than S3's error page at the client.
func (s *Store) PresignGet(ctx context.Context, key, filename string, lifetime time.Duration) (string, error) {
	if _, err := s.head(ctx, key); err != nil {
		return "", err
	}
	lifetime = min(max(lifetime, time.Second), artifacts.MaxPresignLifetime)
	req, err := s3.NewPresignClient(s.client).PresignGetObject(ctx, &s3.GetObjectInput{
		Bucket:                     aws.String(s.loc.Bucket),
		Key:                        aws.String(s.loc.objectKey(key)),
		ResponseContentDisposition: aws.String(`attachment; filename="` + filename + `"`),
		ResponseContentType:        aws.String("application/gzip"),
	}, s3.WithPresignExpires(lifetime))
	if err != nil {
		return "", fmt.Errorf("presign artifact %s in %s: %w", key, s.loc, err)
	}
	return req.URL, nil
}
