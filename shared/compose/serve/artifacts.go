package serve

import (
	"context"
	"fmt"
	"path/filepath"

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
	st, err := s3artifacts.FromURL(client, cfg.Artifacts, cfg.ArtifactMax)
	if err != nil {
		return nil, fmt.Errorf("KILN_ARTIFACTS: %w", err)
	}
	if err := st.Check(ctx); err != nil {
		return nil, fmt.Errorf("KILN_ARTIFACTS: %w", err)
	}
	return st, nil
}
