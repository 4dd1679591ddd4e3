package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/httpapi/openapi/openapitest"
)

func TestPatchOrganizationRefusesBadInputAndChangesNothing(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, t.TempDir()))
	orgID := e2e.Field(t, ts.Do(t, "GET", "/auth/me", ts.Token, nil).Body, "organization", "id")
	path := "/organizations/" + orgID
	before := ts.Do(t, "GET", path, ts.Token, nil).Raw

	tests := []struct {
		name      string
		body      any
		status    int
		code      string
		wantField string
	}{
		{"not JSON", "{name: Local", 400, "bad_request", ""},
		{"empty body", "", 400, "bad_request", ""},
		{"array", `[{"name":"x"}]`, 400, "bad_request", ""},
		{"two objects", `{"name":"a"}{"name":"b"}`, 400, "bad_request", ""},
		{"wrong type", `{"name": 5}`, 400, "bad_request", "name"},
		{"unknown field", `{"name":"x","organizationId":"abc"}`, 400, "validation_failed", "organizationId"},
		{"slug is not editable", `{"slug":"mine"}`, 400, "validation_failed", "slug"},
		{"blank name", `{"name":"   "}`, 400, "validation_failed", "name"},
		{"null name", `{"name":null}`, 400, "validation_failed", "name"},
		{"long name", `{"name":"` + strings.Repeat("n", 101) + `"}`, 400, "validation_failed", "name"},
		{"bad platform", `{"defaultProjectSettings":{"platform":"PS5"}}`, 400, "validation_failed", "defaultProjectSettings.platform"},
		{"bad engine version", `{"defaultProjectSettings":{"ueVersion":"five"}}`, 400, "validation_failed", "defaultProjectSettings.ueVersion"},
		{"unknown default", `{"defaultProjectSettings":{"colour":"red"}}`, 400, "validation_failed", "colour"},
		{"valid name with bad default", `{"name":"New","defaultProjectSettings":{"trigger":"hourly"}}`, 400, "validation_failed", "defaultProjectSettings.trigger"},
		{"integration not configured", `{"integrationSettings":{"github":{"installationId":"1"}}}`, 400, "validation_failed", "integrationSettings"},
		{"too large", `{"name":"` + strings.Repeat("x", 1<<20) + `"}`, 413, "payload_too_large", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Do(t, "PATCH", path, ts.Token, tt.body)
			e2e.WantError(t, r, tt.status, tt.code)
			if tt.wantField != "" {
				fields, _ := r.Body["fields"].(map[string]any)
				if _, ok := fields[tt.wantField]; !ok {
					t.Errorf("fields %v do not name %s", fields, tt.wantField)
				}
			}
			if after := ts.Do(t, "GET", path, ts.Token, nil).Raw; after != before {
				t.Errorf("organization changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func TestPatchOrganizationMergesDefaults(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, t.TempDir()))
	orgID := e2e.Field(t, ts.Do(t, "GET", "/auth/me", ts.Token, nil).Body, "organization", "id")
	path := "/organizations/" + orgID
	r := ts.Do(t, "PATCH", path, ts.Token, `{"name":"Studio","defaultProjectSettings":{"platform":"Linux","ueVersion":"5.3","notifyOnComplete":true}}`)
	if r.Status != 200 {
		t.Fatalf("PATCH: %d %s", r.Status, r.Raw)
	}
	r = ts.Do(t, "PATCH", path, ts.Token, `{"defaultProjectSettings":{"platform":null,"buildType":"Shipping"}}`)
	d, _ := r.Body["defaultProjectSettings"].(map[string]any)
	if r.Status != 200 || d["platform"] != nil || d["buildType"] != "Shipping" || d["ueVersion"] != "5.3" || d["notifyOnComplete"] != true || e2e.Field(t, r.Body, "name") != "Studio" {
		t.Fatalf("merged defaults wrong: %s", r.Raw)
	}
	got := ts.Do(t, "GET", path, ts.Token, nil)
	if got.Raw != r.Raw {
		t.Fatalf("GET differs from PATCH answer:\n%s\n%s", got.Raw, r.Raw)
	}
	for _, k := range []string{"integrationSettings", "perforce", "createdAt", "updatedAt", "plan", "slug"} {
		if _, ok := got.Body[k]; !ok {
			t.Errorf("organization lacks %s: %s", k, got.Raw)
		}
	}
	if r := ts.Do(t, "DELETE", path+"/integrations/github", ts.Token, nil); r.Status != 204 || r.Raw != "" {
		t.Fatalf("unlink: %d %q", r.Status, r.Raw)
	}
}

func TestBadTokensAreRefused(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, t.TempDir()))
	created := ts.Do(t, "POST", "/auth/tokens", ts.Token, `{"name":"ci"}`)
	revoked := e2e.Field(t, created.Body, "token")
	if r := ts.Do(t, "DELETE", "/auth/tokens/"+e2e.Field(t, created.Body, "id"), ts.Token, nil); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	expiring := e2e.Field(t, ts.Do(t, "POST", "/auth/tokens", ts.Token, `{"expiresInDays":1}`).Body, "token")
	tests := []struct{ name, header string }{
		{"no header", ""},
		{"not bearer", "Basic " + ts.Token},
		{"malformed", "Bearer kiln_short"},
		{"unknown", "Bearer kiln_" + strings.Repeat("A", 40)},
		{"revoked", "Bearer " + revoked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", ts.URL()+"/auth/me", nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := openapitest.Client(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("got %d (WWW-Authenticate %q), want 401", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
	e2e.WantError(t, ts.Do(t, "GET", "/auth/me", revoked, nil), 401, "invalid_token")
	if r := ts.Do(t, "GET", "/auth/me", expiring, nil); r.Status != 200 {
		t.Fatalf("a token that expires tomorrow works today: %d", r.Status)
	}
}

func TestTokensAreShownOnceAndPage(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, t.TempDir()))
	var ids []string
	for i := 0; i < 3; i++ {
		r := ts.Do(t, "POST", "/auth/tokens", ts.Token, map[string]any{"name": "t" + string(rune('a'+i))})
		if r.Status != 201 || !e2e.TokenRe.MatchString(e2e.Field(t, r.Body, "token")) {
			t.Fatalf("create token: %d %s", r.Status, r.Raw)
		}
		ids = append(ids, e2e.Field(t, r.Body, "id"))
	}
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		r := ts.Do(t, "GET", "/auth/tokens?limit=2"+cursor, ts.Token, nil)
		if r.Status != 200 || strings.Contains(r.Raw, `"token"`) || e2e.TokenRe.MatchString(r.Raw) {
			t.Fatalf("list: %d %s", r.Status, r.Raw)
		}
		for _, it := range r.Body["items"].([]any) {
			id := it.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("token %s listed twice", id)
			}
			seen[id] = true
		}
		next, _ := r.Body["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = "&cursor=" + next
		if pages > 3 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 4 { // three made here and the bootstrap token
		t.Fatalf("listed %d tokens, want 4", len(seen))
	}
	first := ts.Do(t, "GET", "/auth/tokens?limit=1", ts.Token, nil)
	next := first.Body["nextCursor"].(string)
	for _, bad := range []string{"?limit=0", "?limit=-1", "?limit=abc", "?cursor=garbage", "?cursor=" + next[:len(next)-2] + "AA"} {
		e2e.WantError(t, ts.Do(t, "GET", "/auth/tokens"+bad, ts.Token, nil), 400, "validation_failed")
	}
	if r := ts.Do(t, "GET", "/auth/tokens?limit=1000", ts.Token, nil); r.Status != 200 || len(r.Body["items"].([]any)) != 4 {
		t.Fatalf("large limit is not clamped: %d %s", r.Status, r.Raw)
	}
	// A cursor is bound to its caller: another user of the same organization cannot use it.
	other := e2e.AddUser(t, ts, e2e.OrgOf(t, ts), "viewer")
	e2e.WantError(t, ts.Do(t, "GET", "/auth/tokens?cursor="+next, other, nil), 400, "validation_failed")
	e2e.WantError(t, ts.Do(t, "DELETE", "/auth/tokens/"+ids[0], other, nil), 404, "not_found")
	e2e.WantError(t, ts.Do(t, "DELETE", "/auth/tokens/not-an-id", ts.Token, nil), 404, "not_found")
}

func TestRoutingErrorsUseTheEnvelope(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, t.TempDir()))
	e2e.WantError(t, ts.Do(t, "GET", "/no/such/thing", ts.Token, nil), 404, "not_found")
	r := ts.Do(t, "POST", "/auth/me", ts.Token, `{}`)
	e2e.WantError(t, r, 405, "method_not_allowed")
	if r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("Allow %q", r.Header.Get("Allow"))
	}
}

func TestRateLimitAnswers429WithRetryAfter(t *testing.T) {
	t.Parallel()
	cfg := e2e.NewConfig(t, t.TempDir())
	cfg.RateLimit = 0.5 // a burst of 2, then one request every 2 s
	ts := e2e.StartService(t, e2e.Serve, cfg)
	orgID := e2e.Field(t, ts.Do(t, "GET", "/auth/me", ts.Token, nil).Body, "organization", "id")
	var last e2e.Response
	for i := 0; i < 3; i++ {
		last = ts.Do(t, "GET", "/auth/me", ts.Token, nil)
	}
	e2e.WantError(t, last, 429, "rate_limited")
	if ra := last.Header.Get("Retry-After"); ra != "1" && ra != "2" {
		t.Errorf("Retry-After %q", ra)
	}
	// Another token has its own budget.
	other := e2e.AddUser(t, ts, orgID, "member")
	if r := ts.Do(t, "GET", "/auth/me", other, nil); r.Status != 200 {
		t.Errorf("another token was limited too: %d", r.Status)
	}
}

func TestAccessLogCarriesRequestIDAndNoSecrets(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, t.TempDir()))
	r := ts.Do(t, "GET", "/auth/me", ts.Token, nil)
	id := r.Header.Get("X-Request-Id")
	logs := ts.Logs.String()
	if !strings.Contains(logs, `"request_id":"`+id+`"`) || !strings.Contains(logs, `"org_id":"`) || !strings.Contains(logs, `"status":200`) {
		t.Fatalf("no access log line for %s:\n%s", id, logs)
	}
	if strings.Contains(logs, ts.Token) {
		t.Fatal("the token appears in the logs")
	}
}
