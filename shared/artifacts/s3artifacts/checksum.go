package s3artifacts

import (
	"context"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/kilnbuild/kiln/shared/artifacts"
)

// plainETag is the ETag S3 gives an object stored by one PUT: the MD5 of its bytes, which S3
// computed itself as it stored them.
var plainETag = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ChecksumMD5 answers the size and the MD5 (lower-case hex) of the stored artifact under key, as
// S3 has it, never as a host reported it; kiln.NotFound("artifact") when there is none.
//
// An object stored by one PUT, unencrypted or encrypted with S3's own keys (SSE-S3), has its MD5
// as ETag: S3 computed it from the bytes it stored, so one HEAD tells it. An object assembled from
// parts (a host's multipart upload) has an ETag made of its parts' MD5s ("<hex>-<parts>"), and
// one encrypted with KMS an ETag that is no MD5: S3 keeps no MD5 of the whole object, so the
// service reads the object once from S3 and computes it (one GET of the artifact, within the
// region; the parts' ETags S3 checked at CompleteMultipartUpload say only that each part arrived
// whole, not what the whole is).
func (s *Store) ChecksumMD5(ctx context.Context, key string) (size int64, sum string, err error) {
	head, err := s.head(ctx, key)
	if err != nil {
		return 0, "", err
	}
	etag := strings.Trim(aws.ToString(head.ETag), `"`)
	s3Keys := head.ServerSideEncryption == "" || head.ServerSideEncryption == types.ServerSideEncryptionAes256
	if plainETag.MatchString(etag) && s3Keys {
		return aws.ToInt64(head.ContentLength), etag, nil
	}
	return artifacts.ReadMD5(ctx, s, key)
}
