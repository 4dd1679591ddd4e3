package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/api"
)

// TestAPIErrors: an error answer becomes an *APIError with the API's message and request id,
// also when a proxy answered without the envelope (the X-Request-Id header, or "none").
func TestAPIErrors(t *testing.T) {
	tests := []struct {
		name, body, header string
		status             int
		want               APIError
		text               string
	}{
		{"envelope", `{"error":"validation_failed","message":"Some fields are not valid.","requestId":"req_1","fields":{"status":"must be one of ..."}}`, "req_1", 400,
			APIError{Status: 400, ErrorBody: api.ErrorBody{Code: "validation_failed", Message: "Some fields are not valid.", RequestID: "req_1"}}, "Some fields are not valid.; status: must be one of ... (validation_failed, HTTP 400, request id req_1)"},
		{"proxy page with a request id", "<html>bad gateway</html>", "req_2", 502,
			APIError{Status: 502, ErrorBody: api.ErrorBody{Code: "http_502", Message: "Bad Gateway", RequestID: "req_2"}}, "Bad Gateway (http_502, HTTP 502, request id req_2)"},
		{"nothing", "", "", 503,
			APIError{Status: 503, ErrorBody: api.ErrorBody{Code: "http_503", Message: "Service Unavailable", RequestID: "none"}}, "request id none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer kiln_t" {
					t.Errorf("Authorization %q", r.Header.Get("Authorization"))
				}
				if tt.header != "" {
					w.Header().Set("X-Request-Id", tt.header)
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := New(srv.URL+"/", "kiln_t", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetBuild(context.Background(), "b")
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an *APIError", err)
			}
			if ae.Status != tt.want.Status || ae.Code != tt.want.Code || ae.Message != tt.want.Message || ae.RequestID != tt.want.RequestID {
				t.Errorf("got %+v, want %+v", *ae, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("Error() = %q, want it to contain %q", err, tt.text)
			}
		})
	}
}

func TestNewRefusesBadSettings(t *testing.T) {
	for _, tt := range []struct{ url, token string }{{"kiln.example.com", "t"}, {"ftp://x", "t"}, {"https://x", ""}} {
		if _, err := New(tt.url, tt.token, nil); err == nil {
			t.Errorf("New(%q, %q) accepted", tt.url, tt.token)
		}
	}
}
