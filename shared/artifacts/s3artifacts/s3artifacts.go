// Package s3artifacts keeps artifacts as objects in an S3 bucket (AWS S3, or an S3-compatible
// server such as MinIO): the key "k1/b2.tar.gz" is the object <prefix>/k1/b2.tar.gz.
//
// Put streams the artifact as a multipart upload whose parts are sent in parallel, holding at
// most (Concurrency+2) parts in memory and nothing on disk; an upload that fails or is cancelled
// is aborted, so no object is left, and S3 keeps the previous object under the key until an
// upload completes. Downloads are presigned GETs of the object (artifacts.Presigner).
package s3artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/artifacts"
)

// Defaults of Options.
const (
	// DefaultPartSize allows objects of up to 10,000 × 8 MiB = 78 GiB.
	DefaultPartSize    = 16 << 20
	DefaultConcurrency = 4
	// minPartSize is S3's smallest part but the last.
	minPartSize = 5 << 20
	// maxParts is S3's limit of parts in one upload.
	maxParts = 10_000
	// abortTimeout bounds the abort of a failed upload, which runs even when ctx is done.
	abortTimeout = 30 * time.Second
)

// Options tune uploads. The zero value uses the defaults.
type Options struct {
	// PartSize is the size of each uploaded part (at least 5 MiB); an artifact may be up to
	// 10,000 parts long. PartSizeFor picks one for a largest artifact.
	PartSize int64
	// Concurrency is how many parts are sent at once.
	Concurrency int
}

// PartSizeFor returns the part size that lets an upload reach maxSize bytes (0: no limit known),
// DefaultPartSize or more.
func PartSizeFor(maxSize int64) int64 {
	need := (maxSize + maxParts - 1) / maxParts
	need = (need + 1<<20 - 1) &^ (1<<20 - 1) // whole MiB
	return max(DefaultPartSize, need)
}

// Store is an artifacts.Store on an S3 bucket.
type Store struct {
	client  *s3.Client
	uploads *transfermanager.Client
	loc     Location
}

var (
	_ artifacts.Store     = (*Store)(nil)
	_ artifacts.Presigner = (*Store)(nil)
)

// New returns the store that keeps artifacts at loc with client.
func New(client *s3.Client, loc Location, opts Options) *Store {
	if opts.PartSize == 0 {
		opts.PartSize = DefaultPartSize
	}
	opts.PartSize = max(opts.PartSize, minPartSize)
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	uploads := transfermanager.New(client, func(o *transfermanager.Options) {
		o.PartSizeBytes = opts.PartSize
		o.MultipartUploadThreshold = opts.PartSize
		o.Concurrency = opts.Concurrency
		o.FailTimeout = abortTimeout
	})
	return &Store{client: client, uploads: uploads, loc: loc}
}

// Location is where the store keeps artifacts.
func (s *Store) Location() Location { return s.loc }

// Check tells whether the bucket exists and these credentials may use it.
func (s *Store) Check(ctx context.Context) error {
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.loc.Bucket)}); err != nil {
		return fmt.Errorf("artifacts in %s: cannot reach the bucket: %w", s.loc, err)
	}
	return nil
}

// errUploadStopped is what the writer of a Put sees once the upload has ended early.
var errUploadStopped = errors.New("the artifact upload stopped")

type uploadStopped struct{ err error }

func (e uploadStopped) Error() string        { return fmt.Sprintf("%v: %v", errUploadStopped, e.err) }
func (e uploadStopped) Is(target error) bool { return target == errUploadStopped }

// Put implements artifacts.Store. write runs on the calling goroutine and writes into a pipe;
// the upload reads the other end, so each byte is held once, in the part being sent.
func (s *Store) Put(ctx context.Context, key string, write func(w io.Writer) error) (err error) {
	if err := artifacts.ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	uploaded := make(chan error, 1)
	go func() {
		_, err := s.uploads.UploadObject(ctx, &transfermanager.UploadObjectInput{
			Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.loc.objectKey(key)), Body: pr,
		})
		pr.CloseWithError(uploadStopped{err}) // a writer still writing stops
		uploaded <- err
	}()
	finished := false
	defer func() {
		if !finished { // write panicked or called runtime.Goexit: abort the upload
			pw.CloseWithError(errors.New("the artifact writer stopped"))
			<-uploaded
		}
	}()
	werr := write(artifacts.ContextWriter(ctx, pw))
	pw.CloseWithError(werr) // nil: end of file, the upload completes; else it is aborted
	uerr := <-uploaded
	finished = true
	switch {
	case ctx.Err() != nil && (werr != nil || uerr != nil):
		return fmt.Errorf("put artifact %s: %w", key, ctx.Err())
	case werr != nil && !errors.Is(werr, errUploadStopped):
		return fmt.Errorf("put artifact %s: %w", key, werr)
	case uerr != nil:
		return fmt.Errorf("put artifact %s: upload to %s: %w", key, s.loc, uerr)
	}
	return nil
}

// Delete implements artifacts.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := artifacts.ValidateKey(key); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.loc.objectKey(key))})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("delete artifact %s from %s: %w", key, s.loc, err)
	}
	return nil
}
