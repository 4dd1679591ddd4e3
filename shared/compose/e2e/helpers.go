package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/httpapi/openapi/openapitest"
	"github.com/kilnbuild/kiln/shared/syncbuf"
)

// testService is a real `kiln serve` on a loopback port with a temp data dir.
type Server struct {
	*serve.Service
	// Deployment is which kiln runs: Service is kiln serve, else AWS is kiln aws-local.
	Deployment Deployment
	AWS        *awslocalapp.AWSLocal
	Config     serve.Config
	Out        *syncbuf.Buffer
	Logs       *syncbuf.Buffer
	Token      string // the Local owner's token, when this start printed one
	// Elsewhere is the base URL of a kiln serve this test runs in another process (SetElsewhere).
	Elsewhere string
	// refusals are the IAM refusals the test expects of its aws-local (ExpectRefusals).
	refusals *refusals
}

// shutdown stops the service under test, kiln serve or kiln aws-local.
func (ts *Server) shutdown(ctx context.Context) error {
	if ts.AWS != nil {
		return ts.AWS.Shutdown(ctx)
	}
	return ts.Service.Shutdown(ctx)
}

var TokenRe = regexp.MustCompile(`kiln_[0-9A-Za-z]{40}`)

func NewConfig(t testing.TB, dataDir string) serve.Config {
	t.Helper()
	cfg, err := serve.LoadConfig([]string{"--addr", "127.0.0.1:0", "--data", dataDir, "--rate_limit", "0"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// StartService starts the deployment d on cfg, and stops it when the test ends.
func StartService(t testing.TB, d Deployment, cfg serve.Config) *Server {
	t.Helper()
	ts := &Server{Deployment: d, Config: cfg, Out: &syncbuf.Buffer{}, Logs: &syncbuf.Buffer{}, refusals: &refusals{}}
	logger := slog.New(slog.NewJSONHandler(ts.Logs, nil))
	if d == AWSLocal {
		return startAWSLocal(t, ts, logger)
	}
	svc, err := serve.Start(context.Background(), cfg, ts.Out, logger)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	ts.Service = svc
	ts.Token = TokenRe.FindString(ts.Out.String())
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	return ts
}

// response is a decoded API answer.
type Response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

func (ts *Server) Do(t testing.TB, method, path, token string, body any) Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, ts.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return ts.DoRequest(t, req)
}

// doRequest sends a prepared request through the validating client and decodes the answer.
func (ts *Server) DoRequest(t testing.TB, req *http.Request) Response {
	t.Helper()
	method, path := req.Method, req.URL.Path
	resp, err := openapitest.Client(t).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := Response{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %v\n%s", method, path, err, raw)
		}
	}
	return r
}

// wantError checks an error answer: status, code, and the envelope with the request id.
func WantError(t *testing.T, r Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.Body["error"] != code {
		t.Fatalf("got %d %v, want %d %s\n%s", r.Status, r.Body["error"], status, code, r.Raw)
	}
	if msg, _ := r.Body["message"].(string); msg == "" {
		t.Errorf("error without a message: %s", r.Raw)
	}
	id, _ := r.Body["requestId"].(string)
	if !strings.HasPrefix(id, "req_") || r.Header.Get("X-Request-Id") != id {
		t.Errorf("requestId %q does not match X-Request-Id %q", id, r.Header.Get("X-Request-Id"))
	}
}

// field digs a string out of a decoded body by path.
func Field(t testing.TB, body map[string]any, path ...string) string {
	t.Helper()
	var cur any = body
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("no %v in %v", path, body)
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

func DiscardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func JSONDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }
