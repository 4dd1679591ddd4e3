// Package openapitest checks HTTP traffic against kiln's OpenAPI document. Transport wraps a
// client's RoundTripper: every request it sends and every response it receives is validated, and
// each disagreement with the document fails the test with t.Errorf.
//
// What is checked, per exchange:
//   - The path and method are documented. A path the document lacks must be answered 404
//     not_found, and a documented path with a method it lacks 405 method_not_allowed with an
//     Allow header listing exactly the documented methods (and HEAD with GET); both with the
//     error envelope. Anything else is an error.
//   - The response status is documented for the operation, its body is valid against the
//     schema of that status and content type, and its required headers (X-Request-Id,
//     Retry-After, WWW-Authenticate...) are there and valid.
//   - The request (path, query and header parameters, security, body) is valid. Tests send
//     invalid requests on purpose to see them refused, so by default a request error is reported
//     only when the server accepted the request (status below 400): then server and document
//     disagree. StrictRequests reports every request error.
//
// Response bodies are buffered and handed back unread, so callers read them as usual.
package openapitest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/radix"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/kilnbuild/kiln/shared/httpapi/openapi"
)

// Option changes what Transport checks.
type Option func(*transport)

// StrictRequests reports request errors whatever the server answered: for tests that only send
// requests they mean to be valid.
func StrictRequests() Option { return func(t *transport) { t.strictRequests = true } }

// WithDocument validates against another OpenAPI document (YAML or JSON) instead of kiln's; for
// testing this package.
func WithDocument(doc []byte) Option { return func(t *transport) { t.doc = doc } }

// Transport returns a RoundTripper that sends through base (http.DefaultTransport when nil) and
// validates each exchange against the document, failing t with t.Errorf for every problem.
func Transport(t testing.TB, base http.RoundTripper, opts ...Option) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	tr := &transport{t: t, base: base}
	for _, o := range opts {
		o(tr)
	}
	var err error
	if tr.doc == nil {
		tr.spec, err = kilnSpec()
	} else {
		tr.spec, err = loadSpec(tr.doc)
	}
	if err != nil {
		t.Fatalf("openapitest: %v", err)
	}
	return tr
}

// Client is an *http.Client whose transport is Transport(t, nil, opts...).
func Client(t testing.TB, opts ...Option) *http.Client {
	return &http.Client{Transport: Transport(t, nil, opts...)}
}

type transport struct {
	t              testing.TB
	base           http.RoundTripper
	doc            []byte
	spec           *spec
	strictRequests bool
}

// spec is a loaded document with its validator.
type spec struct {
	model     *v3.Document
	validator validator.Validator
	options   *config.ValidationOptions
	// operations lists "METHOD /template" of every documented operation.
	operations []string
}

var kilnSpec = sync.OnceValues(func() (*spec, error) { return loadSpec(openapi.YAML()) })

func loadSpec(doc []byte) (*spec, error) {
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("the document does not parse: %w", err)
	}
	m, err := d.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("the document does not build: %w", err)
	}
	opts := config.NewValidationOptions()
	opts.PathTree = radix.BuildPathTree(&m.Model) // shared, so FindPath here picks the validator's template
	v := validator.NewValidatorFromV3Model(&m.Model, config.WithExistingOpts(opts))
	return &spec{model: &m.Model, validator: v, options: opts, operations: operationsOf(&m.Model)}, nil
}

func operationsOf(m *v3.Document) []string {
	var ops []string
	if m.Paths == nil {
		return nil
	}
	for path, item := range m.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			ops = append(ops, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(ops)
	return ops
}

// coverage counts exercised operations and statuses across every transport of the test binary.
var coverage = struct {
	sync.Mutex
	ops       map[string]int
	responses map[string]int
}{ops: map[string]int{}, responses: map[string]int{}}

// Coverage returns, for every operation of kiln's document ("GET /builds/{id}"), how many
// exchanges through any Transport of this test binary reached it (0 for those none did). HEAD
// requests count for the GET operation.
func Coverage() map[string]int {
	s, err := kilnSpec()
	out := map[string]int{}
	if err == nil {
		for _, op := range s.operations {
			out[op] = 0
		}
	}
	coverage.Lock()
	defer coverage.Unlock()
	for k, n := range coverage.ops {
		out[k] += n
	}
	return out
}

// Responses returns how many times each operation answered each status ("GET /builds/{id} 404").
func Responses() map[string]int {
	coverage.Lock()
	defer coverage.Unlock()
	out := make(map[string]int, len(coverage.responses))
	for k, n := range coverage.responses {
		out[k] = n
	}
	return out
}

// Uncovered lists the operations of kiln's document that no exchange reached, sorted.
func Uncovered() []string {
	var out []string
	for op, n := range Coverage() {
		if n == 0 {
			out = append(out, op)
		}
	}
	sort.Strings(out)
	return out
}

func count(op string, status int) {
	coverage.Lock()
	defer coverage.Unlock()
	coverage.ops[op]++
	coverage.responses[fmt.Sprintf("%s %d", op, status)]++
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("X-Amz-Algorithm") != "" {
		// A presigned S3 URL (a download redirected to the bucket): S3's API, not kiln's.
		return tr.base.RoundTrip(req)
	}
	var reqBody []byte
	out := req
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		out = req.Clone(req.Context())
		out.Body = io.NopCloser(bytes.NewReader(b))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		out.ContentLength = int64(len(b))
	}
	resp, err := tr.base.RoundTrip(out)
	if err != nil {
		return resp, err
	}
	var respBody []byte
	if bufferable(resp) {
		respBody, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(respBody))
		if err != nil {
			tr.t.Errorf("openapitest: %s %s → %d: reading the response body: %v", req.Method, req.URL.RequestURI(), resp.StatusCode, err)
			return resp, nil
		}
	}
	for _, problem := range tr.spec.check(req, reqBody, resp, respBody, tr.strictRequests) {
		tr.t.Errorf("openapitest: %s %s → %d: %s", req.Method, req.URL.RequestURI(), resp.StatusCode, problem)
	}
	return resp, nil
}

// bufferable reports whether the body is to be read for validation: JSON and error bodies are;
// others (artifact downloads, streamed logs) are left alone.
func bufferable(resp *http.Response) bool {
	if resp.Body == nil || resp.Body == http.NoBody {
		return false
	}
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	return strings.Contains(ct, "json") || ct == ""
}

// check validates one exchange and returns its problems.
func (s *spec) check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte, strict bool) []string {
	vreq := req.Clone(req.Context())
	vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	head := req.Method == http.MethodHead
	if head {
		vreq.Method = http.MethodGet
	}

	item, _, template := paths.FindPath(vreq, s.model, s.options)
	if item == nil {
		return s.checkRoutingError(resp, respBody, http.StatusNotFound, "not_found", "NotFound",
			"the path is not in the document", nil)
	}
	op := operationOf(item, vreq.Method)
	if op == nil {
		return s.checkRoutingError(resp, respBody, http.StatusMethodNotAllowed, "method_not_allowed", "MethodNotAllowed",
			fmt.Sprintf("%s has no %s operation in the document", template, req.Method), allowedMethods(item))
	}
	key := vreq.Method + " " + template
	count(key, resp.StatusCode)

	var problems []string
	if head {
		if _, ok := documentedResponse(op, resp.StatusCode); !ok {
			problems = append(problems, fmt.Sprintf("status %d is not documented for %s", resp.StatusCode, key))
		}
		return problems
	}

	vresp := *resp
	vresp.Body = io.NopCloser(bytes.NewReader(respBody))
	if respBody == nil {
		vresp.Body = http.NoBody
	}
	if _, errs := s.validator.ValidateHttpResponse(vreq, &vresp); len(errs) > 0 {
		for _, e := range errs {
			problems = append(problems, "response: "+describe(e))
		}
	}
	if resp.StatusCode < 400 || strict {
		vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
		if _, errs := s.validator.ValidateHttpRequestSync(vreq); len(errs) > 0 {
			for _, e := range errs {
				msg := "request: " + describe(e)
				if resp.StatusCode < 400 {
					msg += " (the server accepted a request that the document says is invalid)"
				}
				problems = append(problems, msg)
			}
		}
	}
	return problems
}

// checkRoutingError checks the answer to a request that the document has no operation for: it
// must be the routing error of the document's components.responses[component].
func (s *spec) checkRoutingError(resp *http.Response, body []byte, status int, code, component, why string, allow []string) []string {
	if resp.StatusCode != status {
		return []string{fmt.Sprintf("%s, so the answer must be %d %s, not %d", why, status, code, resp.StatusCode)}
	}
	var problems []string
	if allow != nil {
		got := strings.Split(resp.Header.Get("Allow"), ", ")
		slices.Sort(got)
		if !slices.Equal(got, allow) {
			problems = append(problems, fmt.Sprintf("Allow is %q, the document's methods for the path are %q",
				resp.Header.Get("Allow"), strings.Join(allow, ", ")))
		}
	}
	r, ok := s.model.Components.Responses.Get(component)
	if !ok {
		return append(problems, "the document has no components.responses."+component)
	}
	for name, h := range r.Headers.FromOldest() {
		if h.Required && resp.Header.Get(name) == "" {
			problems = append(problems, "response: required header "+name+" is missing")
		}
	}
	mt, ok := r.Content.Get("application/json")
	if !ok || mt.Schema == nil {
		return append(problems, "components.responses."+component+" has no application/json schema")
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		problems = append(problems, fmt.Sprintf("response: Content-Type %q, want application/json", ct))
	}
	sv := schema_validation.NewSchemaValidator()
	if okBody, errs := sv.ValidateSchemaBytes(mt.Schema.Schema(), body); !okBody {
		for _, e := range errs {
			problems = append(problems, "response body ("+component+"): "+describe(e))
		}
	}
	if !bytes.Contains(body, []byte(`"error":"`+code+`"`)) {
		problems = append(problems, fmt.Sprintf("response body: error is not %q: %s", code, body))
	}
	return problems
}

func operationOf(item *v3.PathItem, method string) *v3.Operation {
	for m, op := range item.GetOperations().FromOldest() {
		if strings.EqualFold(m, method) {
			return op
		}
	}
	return nil
}

// allowedMethods lists the methods of a path as the server's Allow header does: sorted, HEAD with GET.
func allowedMethods(item *v3.PathItem) []string {
	var ms []string
	for m := range item.GetOperations().FromOldest() {
		ms = append(ms, strings.ToUpper(m))
		if strings.EqualFold(m, http.MethodGet) {
			ms = append(ms, http.MethodHead)
		}
	}
	slices.Sort(ms)
	return ms
}

func documentedResponse(op *v3.Operation, status int) (*v3.Response, bool) {
	if op.Responses == nil {
		return nil, false
	}
	if r, ok := op.Responses.Codes.Get(fmt.Sprint(status)); ok {
		return r, true
	}
	if r, ok := op.Responses.Codes.Get(fmt.Sprintf("%dXX", status/100)); ok {
		return r, true
	}
	if op.Responses.Default != nil {
		return op.Responses.Default, true
	}
	return nil, false
}

// describe makes one line of a validation error, with the schema errors' locations.
func describe(e *liberrors.ValidationError) string {
	var b strings.Builder
	b.WriteString(e.Message)
	if e.Reason != "" && e.Reason != e.Message {
		b.WriteString(": " + e.Reason)
	}
	for _, f := range e.SchemaValidationErrors {
		loc := f.FieldPath
		if loc == "" {
			loc = "/" + strings.Join(f.InstancePath, "/")
		}
		fmt.Fprintf(&b, "; at %s: %s", loc, f.Reason)
		if f.KeywordLocation != "" {
			fmt.Fprintf(&b, " (schema %s)", f.KeywordLocation)
		}
	}
	return b.String()
}
