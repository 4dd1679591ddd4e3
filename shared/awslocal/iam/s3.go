package iam

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// S3Calls maps an S3 request (path style: /bucket/key) to its IAM calls: s3:GetObject,
// s3:PutObject (also each multipart step), s3:DeleteObject, s3:AbortMultipartUpload,
// s3:ListMultipartUploadParts on the object; s3:ListBucket (a listing with s3:prefix), s3:ListBucketMultipartUploads,
// s3:CreateBucket on the bucket; DeleteObjects needs s3:DeleteObject on each key of its body.
func S3Calls(r *http.Request, body []byte) ([]Call, error) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket == "" {
		return []Call{{Action: "s3:ListAllMyBuckets", Resource: "*"}}, nil
	}
	q := r.URL.Query()
	has := func(k string) bool { _, ok := q[k]; return ok }
	bucketARN := "arn:aws:s3:::" + bucket
	object := bucketARN + "/" + key
	call := func(action, res string) ([]Call, error) { return []Call{{Action: action, Resource: res}}, nil }
	if key == "" {
		switch {
		case r.Method == http.MethodPost && has("delete"):
			var in struct {
				Objects []struct{ Key string } `xml:"Object"`
			}
			if err := xml.Unmarshal(body, &in); err != nil {
				return nil, fmt.Errorf("s3 DeleteObjects: %w", err)
			}
			var out []Call
			for _, o := range in.Objects {
				out = append(out, Call{Action: "s3:DeleteObject", Resource: bucketARN + "/" + o.Key})
			}
			return out, nil
		case (r.Method == http.MethodGet) && has("uploads"):
			return call("s3:ListBucketMultipartUploads", bucketARN)
		case r.Method == http.MethodGet && has("location"):
			return call("s3:GetBucketLocation", bucketARN)
		case r.Method == http.MethodGet:
			// A listing with a prefix sets s3:prefix, which a grant may be limited to
			// (StringLike); one without sets no key, and meets no such condition.
			c := Call{Action: "s3:ListBucket", Resource: bucketARN}
			if has("prefix") {
				c.Context = map[string]string{"s3:prefix": q.Get("prefix")}
			}
			return []Call{c}, nil
		case r.Method == http.MethodHead:
			return call("s3:ListBucket", bucketARN)
		case r.Method == http.MethodPut:
			return call("s3:CreateBucket", bucketARN)
		case r.Method == http.MethodDelete:
			return call("s3:DeleteBucket", bucketARN)
		}
		return nil, fmt.Errorf("s3: aws-local maps no IAM action for %s on a bucket", r.Method)
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if has("uploadId") {
			return call("s3:ListMultipartUploadParts", object)
		}
		return call("s3:GetObject", object)
	case http.MethodPut, http.MethodPost:
		out := []Call{{Action: "s3:PutObject", Resource: object}}
		if src := r.Header.Get("X-Amz-Copy-Source"); src != "" {
			src, _ = url.PathUnescape(strings.TrimPrefix(src, "/"))
			src, _, _ = strings.Cut(src, "?")
			out = append(out, Call{Action: "s3:GetObject", Resource: "arn:aws:s3:::" + src})
		}
		return out, nil
	case http.MethodDelete:
		if has("uploadId") {
			return call("s3:AbortMultipartUpload", object)
		}
		return call("s3:DeleteObject", object)
	}
	return nil, fmt.Errorf("s3: aws-local maps no IAM action for %s", r.Method)
}

// S3Proxy stands in front of MinIO: it checks each request (or presigned URL: its signer's
// key, and its expiry) against the caller's role, then signs it again with MinIO's root
// credentials and passes it on. Signatures of callers are not verified.
type S3Proxy struct {
	Auth *Authorizer
	// Target is MinIO's URL; Credentials its root user's.
	Target      *url.URL
	Credentials aws.Credentials
	Region      string
	Logger      *slog.Logger
	// KMS is the bucket's SSE-KMS key, whose actions S3 calls with the caller's rights.
	KMS S3KMS
	// Meter, if set, wraps what a request that passed the check goes to (aws-local's meter).
	Meter  func(http.Handler) http.Handler
	proxy  *httputil.ReverseProxy
	next   http.Handler
	signer *v4.Signer
	once   sync.Once
}

// presignParams are a presigned URL's signature; they are not passed on.
var presignParams = []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Security-Token"}

func (p *S3Proxy) init() { p.once.Do(p.setUp) }

func (p *S3Proxy) setUp() {
	p.signer = v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	p.proxy = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(p.Target)
		out := pr.Out
		q := out.URL.Query()
		for _, k := range presignParams {
			q.Del(k)
		}
		out.URL.RawQuery = q.Encode()
		out.Header.Del("Authorization")
		out.Header.Del("X-Amz-Date")
		out.Header.Del("X-Amz-Security-Token")
		hash := out.Header.Get("X-Amz-Content-Sha256")
		if hash == "" {
			hash = "UNSIGNED-PAYLOAD"
			out.Header.Set("X-Amz-Content-Sha256", hash)
		}
		if err := p.signer.SignHTTP(context.Background(), p.Credentials, out, hash, "s3", p.Region, time.Now()); err != nil && p.Logger != nil {
			p.Logger.Error("aws-local IAM: sign a request for MinIO", slog.String("error", err.Error()))
		}
	}}
	p.proxy.ModifyResponse = p.answerMissingKey
	p.next = p.proxy
	if p.Meter != nil {
		p.next = p.Meter(p.proxy)
	}
}

// NewS3Proxy returns the proxy; Handler serves it.
func (p *S3Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.init()
	var body []byte
	if r.Method == http.MethodPost && r.URL.Query().Has("delete") {
		b, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err != nil {
			denyS3(w, err)
			return
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	err := presignExpired(r.URL.Query(), time.Now())
	if err == nil {
		var calls []Call
		if calls, err = S3Calls(r, body); err == nil {
			err = p.Auth.Authorize(KeyID(r), append(calls, p.KMS.Calls(r, calls)...)...)
		}
	}
	if err != nil {
		logDenied(p.Logger, r, err)
		denyS3(w, err)
		return
	}
	if read, ok := objectReadOf(r); ok {
		read.keyID = KeyID(r)
		r = r.WithContext(context.WithValue(r.Context(), objectReadKey{}, read))
	}
	p.next.ServeHTTP(w, r)
}

// objectReadKey carries an object read's objectRead to answerMissingKey.
type objectReadKey struct{}

// objectRead is a GetObject or HeadObject: who asks, for which key of which bucket.
type objectRead struct{ keyID, bucket, key string }

func objectReadOf(r *http.Request) (objectRead, bool) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || bucket == "" || key == "" || r.URL.Query().Has("uploadId") {
		return objectRead{}, false
	}
	return objectRead{bucket: bucket, key: key}, true
}

// answerMissingKey applies S3's rule for a key that does not exist, which MinIO does not: "If
// the object you request doesn't exist, the error that Amazon S3 returns depends on whether you
// also have the s3:ListBucket permission. If you have the s3:ListBucket permission on the bucket,
// Amazon S3 returns an HTTP status code 404 Not Found error. If you don't have the s3:ListBucket
// permission, Amazon S3 returns an HTTP status code 403 Forbidden error." (the Permissions of
// GetObject and HeadObject in the Amazon S3 API Reference,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html). The s3:ListBucket check
// sets s3:prefix to the requested key, so a listing grant limited to a prefix answers 404 for the
// keys under it (as S3 does: Ceph's RGW matched it in ceph/ceph#68577, tested against S3 by
// s3-tests' test_head_object_404_with_policy_prefix). The 403 is logged as a refusal.
func (p *S3Proxy) answerMissingKey(resp *http.Response) error {
	read, ok := resp.Request.Context().Value(objectReadKey{}).(objectRead)
	if !ok || resp.StatusCode != http.StatusNotFound {
		return nil
	}
	err := p.Auth.Authorize(read.keyID, Call{Action: "s3:ListBucket", Resource: "arn:aws:s3:::" + read.bucket,
		Context: map[string]string{"s3:prefix": read.key}})
	if err == nil {
		return nil
	}
	err = fmt.Errorf("S3 answers a key that does not exist with 403, not 404, to a caller without s3:ListBucket on its bucket: %w", err)
	logDenied(p.Logger, resp.Request, err)
	var body bytes.Buffer
	if resp.Request.Method != http.MethodHead {
		writeS3Error(&body, err)
	}
	resp.Body.Close()
	resp.StatusCode, resp.Status = http.StatusForbidden, "403 Forbidden"
	resp.Header = http.Header{"Content-Type": {"application/xml"}, "Content-Length": {strconv.Itoa(body.Len())}}
	resp.ContentLength = int64(body.Len())
	resp.Body = io.NopCloser(&body)
	return nil
}

// presignExpired refuses a presigned URL past its X-Amz-Expires.
func presignExpired(q url.Values, now time.Time) error {
	date, expires := q.Get("X-Amz-Date"), q.Get("X-Amz-Expires")
	if date == "" || expires == "" {
		return nil
	}
	t, err1 := time.Parse("20060102T150405Z", date)
	secs, err2 := strconv.Atoi(expires)
	if err1 != nil || err2 != nil {
		return errors.New("the presigned URL's X-Amz-Date or X-Amz-Expires is malformed")
	}
	if now.After(t.Add(time.Duration(secs) * time.Second)) {
		return errors.New("Request has expired")
	}
	return nil
}

// denyS3 answers as S3 does: 403 with an XML error (AccessDenied; InvalidAccessKeyId for a key
// of no principal).
func denyS3(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusForbidden)
	writeS3Error(w, err)
}

// writeS3Error writes S3's XML error of a refusal.
func writeS3Error(w io.Writer, err error) {
	code := "AccessDenied"
	var unknown *UnknownKey
	if errors.As(err, &unknown) {
		code = "InvalidAccessKeyId"
	}
	xml.NewEncoder(w).Encode(struct {
		XMLName   xml.Name `xml:"Error"`
		Code      string   `xml:"Code"`
		Message   string   `xml:"Message"`
		RequestID string   `xml:"RequestId"`
	}{Code: code, Message: err.Error(), RequestID: "aws-local"})
}
