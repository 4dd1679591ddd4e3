package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
)

// newArtifactStore opens the artifact store KILN_ARTIFACTS names: files under the data directory
// ("file", the default), or an S3 bucket, which must be reachable at start.
func newArtifactStore(ctx context.Context, cfg Config) (artifacts.Store, error) {
	if cfg.Artifacts == "" || cfg.Artifacts == "file" {
		return fsartifacts.New(filepath.Join(cfg.Data, "artifacts"))
	}
	client, err := s3artifacts.NewClient(ctx)
	if err != nil {
		return nil, fmt.Errorf("KILN_ARTIFACTS=%s: %w", cfg.Artifacts, err)
	}
	st, err := newS3Artifacts(client, cfg.Artifacts, cfg.ArtifactMax)
	if err != nil {
		return nil, err
	}
	if err := st.Check(ctx); err != nil {
		return nil, fmt.Errorf("KILN_ARTIFACTS: %w", err)
	}
	return st, nil
}

// newS3Artifacts is the S3 store at url, with parts large enough for an artifact of maxSize bytes.
func newS3Artifacts(client *s3.Client, url string, maxSize int64) (*s3artifacts.Store, error) {
	loc, err := s3artifacts.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("KILN_ARTIFACTS: %w", err)
	}
	return s3artifacts.New(client, loc, s3artifacts.Options{PartSize: s3artifacts.PartSizeFor(maxSize)}), nil
}
