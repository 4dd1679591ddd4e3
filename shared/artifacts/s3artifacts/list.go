package s3artifacts

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/artifacts"
)

// List returns the artifacts whose keys start with prefix ("" for all), sorted by key: every
// page of ListObjectsV2 under the store's location. Objects whose keys are not valid artifact
// keys (put there by something else) are left out.
func (s *Store) List(ctx context.Context, prefix string) ([]artifacts.Info, error) {
	if err := artifacts.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	locPrefix := s.loc.objectKey("")
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.loc.Bucket),
		Prefix: aws.String(s.loc.objectKey(prefix)),
	})
	var out []artifacts.Info
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list artifacts %q in %s: %w", prefix, s.loc, err)
		}
		for _, o := range page.Contents {
			key, ok := strings.CutPrefix(aws.ToString(o.Key), locPrefix)
			if !ok || artifacts.ValidateKey(key) != nil {
				continue
			}
			out = append(out, artifacts.Info{Key: key, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
		}
	}
	return out, nil // S3 lists keys in UTF-8 binary order, which for valid keys is byte order
}
