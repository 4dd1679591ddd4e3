package apigateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// TestRequestsReachTheRouterAsThroughAPIGateway: a request goes through the payload 2.0 event
// and the same adapter the API Lambda uses, and comes back whole: method, path, query, headers,
// cookies, a binary body, status, response headers.
func TestRequestsReachTheRouterAsThroughAPIGateway(t *testing.T) {
	router := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c, _ := r.Cookie("session")
		w.Header().Set("X-Seen", r.Method+" "+r.URL.Path+"?"+r.URL.Query().Get("a")+" "+r.Header.Get("Authorization")+" "+c.Value)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(append([]byte{0, 255}, body...))
	})
	fn := lambda.NewHandler(httpadapter.NewV2(router).ProxyWithContext)
	srv := httptest.NewServer(&Handler{Function: fn})
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orgs/x%2Fy?a=1&a=2", bytes.NewReader([]byte{1, 2, 3}))
	req.Header.Set("Authorization", "Bearer t")
	req.AddCookie(&http.Cookie{Name: "session", Value: "s1"})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || !bytes.Equal(got, []byte{0, 255, 1, 2, 3}) {
		t.Fatalf("got %d %v", resp.StatusCode, got)
	}
	if seen := resp.Header.Get("X-Seen"); seen != "POST /orgs/x/y?1 Bearer t s1" {
		t.Fatalf("the router saw %q", seen)
	}
	if resp.Header.Get("Apigw-Requestid") == "" {
		t.Fatal("no request id header")
	}
}

type failing struct{}

func (failing) Invoke(context.Context, []byte) ([]byte, error) { return nil, errors.New("boom") }

// oversized answers with a response larger than Lambda allows.
type oversized struct{}

func (oversized) Invoke(context.Context, []byte) ([]byte, error) {
	return []byte(`{"statusCode":200,"body":"` + strings.Repeat("x", MaxResponseSize) + `"}`), nil
}

// slow answers after its delay, or when the test ends.
type slow struct {
	delay time.Duration
	ended chan struct{}
}

func (s slow) Invoke(context.Context, []byte) ([]byte, error) {
	select {
	case <-time.After(s.delay):
	case <-s.ended:
	}
	return []byte(`{"statusCode":200,"body":"late"}`), nil
}

// TestGatewayErrors: the answers of an HTTP API when its integration fails or a limit is hit.
func TestGatewayErrors(t *testing.T) {
	ended := make(chan struct{})
	defer close(ended)
	tests := []struct {
		name    string
		fn      Function
		timeout time.Duration
		body    []byte
		want    int
		message string
	}{
		{"a failing function", failing{}, 0, nil, http.StatusInternalServerError, "Internal Server Error"},
		{"a body over 10 MB", failing{}, 0, bytes.Repeat([]byte("a"), MaxRequestBody+1), http.StatusRequestEntityTooLarge, "Request Entity Too Large"},
		{"a response over 6 MB", oversized{}, 0, nil, http.StatusBadGateway, "Internal Server Error"},
		{"a function slower than the integration timeout", slow{time.Hour, ended}, 200 * time.Millisecond, nil, http.StatusServiceUnavailable, "Service Unavailable"},
		{"a function within the timeout", slow{10 * time.Millisecond, ended}, 5 * time.Second, nil, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			start := time.Now()
			(&Handler{Function: tt.fn, Timeout: tt.timeout}).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(tt.body)))
			if rec.Code != tt.want {
				t.Fatalf("got %d, want %d", rec.Code, tt.want)
			}
			if tt.message != "" && strings.TrimSpace(rec.Body.String()) != `{"message":"`+tt.message+`"}` {
				t.Fatalf("body %q, want API Gateway's message %q", rec.Body.String(), tt.message)
			}
			if tt.timeout > 0 && time.Since(start) > tt.timeout+2*time.Second {
				t.Fatalf("answered after %v, timeout %v", time.Since(start), tt.timeout)
			}
		})
	}
}

// TestTheIntegrationTimeoutIsAnHTTPAPIs: without a Timeout, the gateway waits 30 s, an HTTP
// API's integration timeout.
func TestTheIntegrationTimeoutIsAnHTTPAPIs(t *testing.T) {
	if got := (&Handler{}).timeout(); got != 30*time.Second {
		t.Fatalf("default integration timeout %v, want 30s", got)
	}
}
