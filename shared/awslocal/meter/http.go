package meter

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kilnbuild/kiln/shared/awscost"
)

// Who names the principal of a request (aws-local: the role whose access key id signed it).
type Who func(*http.Request) string

// readBody reads the request's body and puts it back.
func readBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body
}

// operation is a JSON-protocol request's operation (the X-Amz-Target after its dot), or a
// query-protocol request's Action.
func operation(r *http.Request, body []byte) string {
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		return t[strings.LastIndex(t, ".")+1:]
	}
	if form, err := url.ParseQuery(string(body)); err == nil && form.Get("Action") != "" {
		return form.Get("Action")
	}
	return r.Method
}

// recorder keeps a response to be read (and changed) before it is sent.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder                    { return &recorder{header: http.Header{}, status: http.StatusOK} }
func (w *recorder) Header() http.Header         { return w.header }
func (w *recorder) WriteHeader(status int)      { w.status = status }
func (w *recorder) Write(p []byte) (int, error) { return w.body.Write(p) }
func (w *recorder) sendTo(out http.ResponseWriter, body []byte) {
	for k, v := range w.header {
		out.Header()[k] = v
	}
	out.Header().Set("Content-Length", strconv.Itoa(len(body)))
	out.WriteHeader(w.status)
	out.Write(body)
}

// S3 counts each request by its S3 request class (awscost.S3Request).
func (m *Meter) S3(who Who, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		u := awscost.S3Request(r.Method, r.URL.Query(), key != "")
		class := "s3:tier2"
		switch {
		case u.S3Tier1Requests > 0:
			class = "s3:tier1"
		case u.S3FreeRequests > 0:
			class = "s3:free"
		}
		m.Add(who(r), class+" "+r.Method, u)
		next.ServeHTTP(w, r)
	})
}

// SQS counts each request as SQS bills it: a request per 64 KB chunk of its payload (the larger
// of the request's and the response's bodies, which carry the messages sent or received).
func (m *Meter) SQS(who Who, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readBody(r)
		rec := newRecorder()
		next.ServeHTTP(rec, r)
		size := max(len(body), rec.body.Len())
		m.Add(who(r), "sqs:"+operation(r, body), awscost.SQSRequest(int64(size)))
		rec.sendTo(w, rec.body.Bytes())
	})
}

// Free counts each request of an API AWS does not bill per call (Step Functions', CodeBuild's,
// Auto Scaling's, Lambda's Invoke call: the function's own request is counted where it runs).
func (m *Meter) Free(service string, who Who, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readBody(r)
		op := operation(r, body)
		if service == "lambda" {
			op = "Invoke"
		}
		m.Add(who(r), service+":"+op, awscost.Usage{FreeRequests: 1})
		next.ServeHTTP(w, r)
	})
}

func nopCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

func itoa(n int) string { return strconv.Itoa(n) }
