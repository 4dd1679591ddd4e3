package agentapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// fakeDispatcher knows one token and hands out one build, recording the offer.
type fakeDispatcher struct{ offer *agentpool.Offer }

func (f *fakeDispatcher) Authenticate(ctx context.Context, token string) (*kiln.Agent, error) {
	if token != "good" {
		return nil, kiln.Errorf(kiln.EInvalidToken, "no")
	}
	return &kiln.Agent{Credential: kiln.Credential{ID: "a"}, Pool: "win"}, nil
}

func (f *fakeDispatcher) Claim(ctx context.Context, a *kiln.Agent, offer agentpool.Offer, wait time.Duration) (*agentpool.Claimed, error) {
	f.offer = &offer
	if wait > 0 {
		return nil, nil
	}
	return &agentpool.Claimed{Build: &kiln.Build{ID: "b1"}, Credential: "cred"}, nil
}

func TestClaimEndpoint(t *testing.T) {
	tests := []struct {
		name, method, token, body string
		status                    int
		claimed                   bool // the dispatcher was asked
	}{
		{"a build", "POST", "good", `{"platforms":["Win64"],"engineVersions":["5.4"]}`, 200, true},
		{"nothing within the wait", "POST", "good", `{"platforms":["Win64"],"engineVersions":["5.4"],"waitSeconds":30}`, 204, true},
		{"no token", "POST", "", `{"platforms":["Win64"],"engineVersions":["5.4"]}`, 401, false},
		{"a refused token", "POST", "bad", `{"platforms":["Win64"],"engineVersions":["5.4"]}`, 401, false},
		{"no platforms", "POST", "good", `{"platforms":[],"engineVersions":["5.4"]}`, 400, false},
		{"an unknown platform", "POST", "good", `{"platforms":["Amiga"],"engineVersions":["5.4"]}`, 400, false},
		{"a bad engine version", "POST", "good", `{"platforms":["Win64"],"engineVersions":["latest"]}`, 400, false},
		{"too long a wait", "POST", "good", `{"platforms":["Win64"],"engineVersions":["5.4"],"waitSeconds":31}`, 400, false},
		{"its own pool", "POST", "good", `{"pool":"win","platforms":["Win64"],"engineVersions":["5.4"]}`, 200, true},
		{"another pool", "POST", "good", `{"pool":"linux","platforms":["Win64"],"engineVersions":["5.4"]}`, 400, false},
		{"an unknown field", "POST", "good", `{"platforms":["Win64"],"engineVersions":["5.4"],"size":1}`, 400, false},
		{"GET", "GET", "good", ``, 404, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &fakeDispatcher{}
			h := (&Claims{Dispatcher: d, HostURL: "https://kiln.example"}).Handler()
			req := httptest.NewRequest(tt.method, ClaimPath, strings.NewReader(tt.body))
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status || (d.offer != nil) != tt.claimed {
				t.Fatalf("status %d (claimed %v), want %d (%v): %s", rec.Code, d.offer != nil, tt.status, tt.claimed, rec.Body)
			}
			if rec.Code == http.StatusOK && !strings.Contains(rec.Body.String(), `"hostUrl":"https://kiln.example"`) {
				t.Fatalf("answer: %s", rec.Body)
			}
		})
	}
}
