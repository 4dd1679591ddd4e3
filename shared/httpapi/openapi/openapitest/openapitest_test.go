package openapitest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that records Errorf instead of failing, to see what Transport reports.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := r.errs
	r.errs = nil
	return errs
}

const (
	anID      = "0PeSkx3a-Cz3o4TqjT2sLkAy"
	requestID = "req_0PeSkx3a-Cz3o4TqjT2sLkAz"
	validMe   = `{"user":{"id":"` + anID + `","email":"a@studio.example","name":"A"},` +
		`"organization":{"id":"` + anID + `","name":"Studio","slug":"studio","plan":"free"},` +
		`"membership":{"role":"owner"},"organizations":[],"session":null}`
	errorBody = `{"error":"%s","message":"m","requestId":"` + requestID + `"}`
)

// fakeKiln answers what each test case asks for through the X-Case header.
func fakeKiln(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		if r.Header.Get("X-Case") != "no-request-id" {
			h.Set("X-Request-Id", requestID)
		}
		switch r.Header.Get("X-Case") {
		case "valid", "no-request-id":
			io.WriteString(w, validMe)
		case "invalid":
			// role is not one of the enum, membership has a stray field, name is missing.
			io.WriteString(w, `{"user":{"id":"`+anID+`","email":"a@studio.example"},`+
				`"organization":{"id":"`+anID+`","name":"Studio","slug":"studio","plan":"free"},`+
				`"membership":{"role":"superuser","extra":1},"organizations":[],"session":null}`)
		case "teapot":
			w.WriteHeader(http.StatusTeapot)
			fmt.Fprintf(w, errorBody, "internal")
		case "unauthorized":
			h.Set("WWW-Authenticate", `Bearer realm="kiln"`)
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, errorBody, "invalid_token")
		case "rate-limited-without-retry-after":
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprintf(w, errorBody, "rate_limited")
		case "head":
			w.WriteHeader(http.StatusOK)
		case "405", "405-wrong-allow":
			allow := "GET, HEAD"
			if r.Header.Get("X-Case") == "405-wrong-allow" {
				allow = "GET, HEAD, POST"
			}
			h.Set("Allow", allow)
			w.WriteHeader(http.StatusMethodNotAllowed)
			fmt.Fprintf(w, errorBody, "method_not_allowed")
		case "404":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, errorBody, "not_found")
		case "200-for-unknown-path":
			io.WriteString(w, `{}`)
		case "token-created", "token-refused":
			body, _ := io.ReadAll(r.Body)
			if string(body) != `{"name":"ci","colour":"red"}` {
				t.Errorf("the server got body %q", body)
			}
			if r.Header.Get("X-Case") == "token-refused" {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, errorBody, "validation_failed")
				return
			}
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":"`+anID+`","name":"ci","hint":"kiln_AbC1","token":"kiln_`+strings.Repeat("a", 40)+
				`","createdAt":"2026-11-21T10:04:05.123Z","expiresAt":null}`)
		default:
			t.Errorf("unknown case %q", r.Header.Get("X-Case"))
		}
	})
}

func TestTransportFindsWhatTheDocumentForbids(t *testing.T) {
	srv := httptest.NewServer(fakeKiln(t))
	defer srv.Close()
	rec := &recorder{TB: t}
	client := &http.Client{Transport: Transport(rec, nil)}

	do := func(method, path, testCase, body string) (*http.Response, string) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, srv.URL+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer kiln_"+strings.Repeat("a", 40))
		req.Header.Set("X-Case", testCase)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(got)
	}

	for _, tc := range []struct {
		name, method, path, body string
		// want lists substrings that the reported errors must hold, all of them; none means no error.
		want []string
	}{
		{name: "valid", method: "GET", path: "/auth/me"},
		{name: "invalid", method: "GET", path: "/auth/me",
			want: []string{"GET /auth/me → 200", "response", "membership.role", "extra", "name"}},
		{name: "no-request-id", method: "GET", path: "/auth/me", want: []string{"X-Request-Id"}},
		{name: "teapot", method: "GET", path: "/auth/me", want: []string{"→ 418", "418"}},
		{name: "unauthorized", method: "GET", path: "/auth/me"},
		{name: "rate-limited-without-retry-after", method: "GET", path: "/auth/me", want: []string{"Retry-After"}},
		{name: "head", method: "HEAD", path: "/auth/me"},
		{name: "405", method: "POST", path: "/auth/me"},
		{name: "405-wrong-allow", method: "DELETE", path: "/auth/me", want: []string{"Allow", "GET, HEAD"}},
		{name: "404", method: "GET", path: "/no/such/thing"},
		{name: "200-for-unknown-path", method: "GET", path: "/no/such/thing", want: []string{"404 not_found"}},
		// An unknown field is fine when the server refuses it, and a finding when it accepts it.
		{name: "token-refused", method: "POST", path: "/auth/tokens", body: `{"name":"ci","colour":"red"}`},
		{name: "token-created", method: "POST", path: "/auth/tokens", body: `{"name":"ci","colour":"red"}`,
			want: []string{"POST /auth/tokens → 201", "request", "colour", "accepted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(tc.method, tc.path, tc.name, tc.body)
			errs := rec.take()
			all := strings.Join(errs, "\n")
			if len(tc.want) == 0 && len(errs) > 0 {
				t.Errorf("reported errors for a valid exchange:\n%s", all)
			}
			if len(tc.want) > 0 && len(errs) == 0 {
				t.Errorf("reported nothing; want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("no reported error mentions %q:\n%s", w, all)
				}
			}
			if tc.method != "HEAD" && body == "" {
				t.Errorf("the caller could not read the body (status %d)", resp.StatusCode)
			}
		})
	}
	if c := Coverage(); c["GET /auth/me"] == 0 || c["POST /auth/tokens"] != 2 {
		t.Errorf("coverage: GET /auth/me %d, POST /auth/tokens %d", c["GET /auth/me"], c["POST /auth/tokens"])
	}
	if _, ok := Coverage()["GET /builds/{id}"]; !ok {
		t.Error("Coverage does not list operations that were not exercised")
	}
	if Responses()["GET /auth/me 401"] != 1 {
		t.Errorf("responses: %v", Responses())
	}
}

func TestValidBodyIsHandedBackUnchanged(t *testing.T) {
	srv := httptest.NewServer(fakeKiln(t))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/auth/me", nil)
	req.Header.Set("Authorization", "Bearer kiln_"+strings.Repeat("a", 40))
	req.Header.Set("X-Case", "valid")
	resp, err := Client(t, StrictRequests()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != validMe {
		t.Fatalf("body %q, want %q", body, validMe)
	}
}
