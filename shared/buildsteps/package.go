package buildsteps

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/manifest"
	"github.com/kilnbuild/kiln/shared/packaging"
	"github.com/kilnbuild/kiln/shared/settings"
)

// PackageInput says what to package and where to store it.
type PackageInput struct {
	// StagedDir is the directory to package (BuildOutput.StagedDir).
	StagedDir string
	// TopName is the name of the tarball's top directory.
	TopName string
	// Key is the artifact's key in the store.
	Key string
	// MaxSize is the largest artifact allowed, in bytes (KILN_ARTIFACT_MAX); 0 means no limit.
	// Packaging stops as soon as the stream passes it, and nothing is stored.
	MaxSize int64
	// ManifestKey, when set, is where the artifact's manifest (its files and their sizes,
	// recorded while archiving) is stored right after the artifact. A manifest that cannot be
	// stored is logged and does not fail the build: the build then has no size report.
	ManifestKey string
}

// PackageOutput is the stored artifact.
type PackageOutput struct {
	Key  string
	Size int64
	// MD5 is the hex MD5 of the stored bytes.
	MD5 string
}

// Package stores StagedDir as a gzipped tarball under Key (stage "upload"; "package" is
// RunUAT's). The tarball is streamed into the store, never held whole.
func (a *Steps) Package(ctx context.Context, in PackageInput, r Reporter) (PackageOutput, error) {
	if a.Artifacts == nil {
		return PackageOutput{}, errors.New("agent: package: no artifact store")
	}
	if in.StagedDir == "" || in.TopName == "" || in.Key == "" {
		return PackageOutput{}, errors.New("agent: package: StagedDir, TopName and Key are required")
	}
	if err := artifacts.ValidateKey(in.Key); err != nil {
		return PackageOutput{}, fmt.Errorf("agent: package: %w", err)
	}
	r.Stage(ctx, StageUpload)
	logf(ctx, r, LevelInfo, "Packaging the build as %s.tar.gz", in.TopName)
	var (
		res    packaging.Result
		files  []manifest.Entry
		tarErr error
	)
	err := a.Artifacts.Put(ctx, in.Key, func(w io.Writer) error {
		if in.MaxSize > 0 {
			w = &limitWriter{w: w, left: in.MaxSize}
		}
		if in.ManifestKey == "" {
			res, tarErr = packaging.TarGz(ctx, in.StagedDir, in.TopName, w)
		} else {
			res, files, tarErr = packaging.TarGzManifest(ctx, in.StagedDir, in.TopName, w)
		}
		return tarErr
	})
	if ctx.Err() != nil {
		return PackageOutput{}, fmt.Errorf("agent: package stopped: %w", ctx.Err())
	}
	switch {
	case errors.Is(tarErr, errTooLarge):
		return PackageOutput{}, fail(ctx, r, StageUpload, tarErr,
			"the artifact is larger than the limit of %s (KILN_ARTIFACT_MAX)", settings.FormatSize(in.MaxSize))
	case tarErr != nil:
		return PackageOutput{}, fail(ctx, r, StageUpload, tarErr, "packaging failed: could not archive the staged build")
	case err != nil:
		// The build's log says only that storing failed; the operator's log says why.
		a.logger().ErrorContext(ctx, "agent: store the artifact", "key", in.Key, "error", err.Error())
		return PackageOutput{}, fail(ctx, r, StageUpload, err, "packaging failed: could not store the artifact")
	}
	logf(ctx, r, LevelInfo, "Stored the artifact: %d files, %d bytes, MD5 %s", res.Files, res.Size, res.MD5)
	a.logger().InfoContext(ctx, "agent: artifact stored", "key", in.Key, "size", res.Size)
	if in.ManifestKey != "" {
		a.putManifest(ctx, in.ManifestKey, files, r)
	}
	return PackageOutput{Key: in.Key, Size: res.Size, MD5: res.MD5}, nil
}

// putManifest stores the artifact's manifest; a failure only costs the build its size report.
func (a *Steps) putManifest(ctx context.Context, key string, files []manifest.Entry, r Reporter) {
	err := artifacts.ValidateKey(key)
	if err == nil {
		err = a.Artifacts.Put(ctx, key, func(w io.Writer) error { return manifest.Write(w, files) })
	}
	if err != nil {
		logf(ctx, r, LevelWarn, "Could not store the artifact's file list: this build has no size report")
		a.logger().WarnContext(ctx, "agent: store the manifest", "key", key, "error", err.Error())
	}
}

// errTooLarge stops a package stream that passed PackageInput.MaxSize.
var errTooLarge = errors.New("the artifact passed its size limit")

// limitWriter passes at most left bytes to w; a write that would pass them writes nothing and
// fails with errTooLarge.
type limitWriter struct {
	w    io.Writer
	left int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		l.left = -1
		return 0, errTooLarge
	}
	n, err := l.w.Write(p)
	l.left -= int64(n)
	return n, err
}
