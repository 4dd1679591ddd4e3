package s3artifacts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/kilnbuild/kiln/shared/artifacts"
)

// The multipart upload of an artifact by a remote build host: the service creates the upload,
// hands the host one presigned PUT URL per part (the host holds no AWS credentials), completes
// the upload with the parts' ETags the host reports, and checks the object. The key is always
// the service's choice: a presigned part URL is good only for the key and upload it was made for.

// CreateUpload starts a multipart upload of the artifact under key and returns its id.
func (s *Store) CreateUpload(ctx context.Context, key string) (string, error) {
	if err := artifacts.ValidateKey(key); err != nil {
		return "", err
	}
	out, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.loc.objectKey(key)), ContentType: aws.String("application/gzip"),
	})
	if err != nil {
		return "", fmt.Errorf("start the upload of artifact %s to %s: %w", key, s.loc, err)
	}
	return aws.ToString(out.UploadId), nil
}

// PresignPart returns a URL that accepts one PUT of part number (1 to 10,000) of the upload,
// for lifetime (1 second to artifacts.MaxPresignLifetime).
func (s *Store) PresignPart(ctx context.Context, key, uploadID string, number int32, lifetime time.Duration) (string, error) {
	if err := artifacts.ValidateKey(key); err != nil {
		return "", err
	}
	if uploadID == "" || number < 1 || number > maxParts {
		return "", fmt.Errorf("presign a part of artifact %s: no upload id, or part %d outside 1..%d", key, number, maxParts)
	}
	lifetime = min(max(lifetime, time.Second), artifacts.MaxPresignLifetime)
	req, err := s3.NewPresignClient(s.client).PresignUploadPart(ctx, &s3.UploadPartInput{
		Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.loc.objectKey(key)),
		UploadId: aws.String(uploadID), PartNumber: aws.Int32(number),
	}, s3.WithPresignExpires(lifetime))
	if err != nil {
		return "", fmt.Errorf("presign part %d of artifact %s in %s: %w", number, key, s.loc, err)
	}
	return req.URL, nil
}

// CompleteUpload makes the upload's parts the object under key, in part order.
func (s *Store) CompleteUpload(ctx context.Context, key, uploadID string, parts []artifacts.UploadedPart) error {
	if err := artifacts.ValidateKey(key); err != nil {
		return err
	}
	if len(parts) == 0 {
		return errors.New("complete an upload: no parts")
	}
	done := make([]types.CompletedPart, len(parts))
	for i, p := range parts {
		done[i] = types.CompletedPart{PartNumber: aws.Int32(p.Number), ETag: aws.String(p.ETag)}
	}
	_, err := s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.loc.objectKey(key)), UploadId: aws.String(uploadID),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	})
	if err != nil {
		return fmt.Errorf("complete the upload of artifact %s to %s: %w", key, s.loc, err)
	}
	return nil
}

// AbortUpload drops an upload and the parts sent so far; an upload already gone is not an error.
func (s *Store) AbortUpload(ctx context.Context, key, uploadID string) error {
	if err := artifacts.ValidateKey(key); err != nil {
		return err
	}
	_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.loc.objectKey(key)), UploadId: aws.String(uploadID),
	})
	var missing *types.NoSuchUpload
	if err != nil && !errors.As(err, &missing) && !isNotFound(err) {
		return fmt.Errorf("abort the upload of artifact %s to %s: %w", key, s.loc, err)
	}
	return nil
}

// Stat returns the size of the artifact under key; kiln.NotFound("artifact") when there is none.
func (s *Store) Stat(ctx context.Context, key string) (int64, error) {
	head, err := s.head(ctx, key)
	if err != nil {
		return 0, err
	}
	return aws.ToInt64(head.ContentLength), nil
}
