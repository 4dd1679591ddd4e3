package s3artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Open implements artifacts.Store. The object reads with ranged GETs, each from the current
// offset to the end, under ctx; a Seek drops the open response and the next Read starts a new
// one. Reads fail if the object is replaced while open (If-Match on its ETag).
func (s *Store) Open(ctx context.Context, key string) (artifacts.Object, error) {
	head, err := s.head(ctx, key)
	if err != nil {
		return nil, err
	}
	return &object{ctx: ctx, s: s, key: key, etag: aws.ToString(head.ETag),
		size: aws.ToInt64(head.ContentLength), modTime: aws.ToTime(head.LastModified)}, nil
}

// head reads an artifact's metadata; kiln.NotFound("artifact") when there is none.
func (s *Store) head(ctx context.Context, key string) (*s3.HeadObjectOutput, error) {
	if err := artifacts.ValidateKey(key); err != nil {
		return nil, err
	}
	head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.loc.objectKey(key))})
	if isNotFound(err) {
		return nil, kiln.NotFound("artifact")
	}
	if err != nil {
		return nil, fmt.Errorf("open artifact %s in %s: %w", key, s.loc, err)
	}
	return head, nil
}

// isNotFound tells whether S3 answered 404 (no such key; HEAD has no error code to go by).
func isNotFound(err error) bool {
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
}

// object is an open artifact in S3.
type object struct {
	ctx     context.Context
	s       *Store
	key     string
	etag    string
	size    int64
	modTime time.Time
	pos     int64
	body    io.ReadCloser // a GET of [pos, size), or nil
}

func (o *object) Size() int64        { return o.size }
func (o *object) ModTime() time.Time { return o.modTime }

func (o *object) Read(p []byte) (int, error) {
	if o.pos >= o.size {
		return 0, io.EOF
	}
	if o.body == nil {
		out, err := o.s.client.GetObject(o.ctx, &s3.GetObjectInput{
			Bucket: aws.String(o.s.loc.Bucket), Key: aws.String(o.s.loc.objectKey(o.key)),
			Range: aws.String("bytes=" + strconv.FormatInt(o.pos, 10) + "-"), IfMatch: aws.String(o.etag),
		})
		if err != nil {
			return 0, fmt.Errorf("read artifact %s at %d: %w", o.key, o.pos, err)
		}
		o.body = out.Body
	}
	n, err := o.body.Read(p)
	o.pos += int64(n)
	if err == io.EOF {
		o.body.Close()
		o.body = nil
		if o.pos < o.size { // the response ended early
			err = fmt.Errorf("read artifact %s: %w at %d of %d bytes", o.key, io.ErrUnexpectedEOF, o.pos, o.size)
		}
	}
	return n, err
}

func (o *object) Seek(offset int64, whence int) (int64, error) {
	var pos int64
	switch whence {
	case io.SeekStart:
		pos = offset
	case io.SeekCurrent:
		pos = o.pos + offset
	case io.SeekEnd:
		pos = o.size + offset
	default:
		return o.pos, errors.New("seek: invalid whence")
	}
	if pos < 0 {
		return o.pos, errors.New("seek: negative position")
	}
	if pos != o.pos && o.body != nil {
		o.body.Close()
		o.body = nil
	}
	o.pos = pos
	return pos, nil
}

func (o *object) Close() error {
	if o.body != nil {
		err := o.body.Close()
		o.body = nil
		return err
	}
	return nil
}
