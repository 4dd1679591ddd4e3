package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// check_run events kiln does not act on are acknowledged; a rerequested one that names no
// build, installation or sender is refused; one for an installation no organization links
// starts nothing.
func TestGitHubCheckEvents(t *testing.T) {
	s := newHookServer(t, 1)
	const build = "kP7MxGtpCFXcU-nW6MQdhDvo"
	cases := []struct {
		name, event, body string
		want              int
		says              string
	}{
		{"created", "check_run", `{"action":"created","check_run":{"external_id":"` + build + `"},"installation":{"id":5},"sender":{"login":"octocat"}}`, 200, "acknowledged"},
		{"suite", "check_suite", `{"action":"rerequested","check_suite":{"head_sha":"abc"},"installation":{"id":5},"sender":{"login":"octocat"}}`, 200, "acknowledged"},
		{"no build", "check_run", `{"action":"rerequested","check_run":{"external_id":"not a build"},"installation":{"id":5},"sender":{"login":"octocat"}}`, 400, "bad_request"},
		{"no installation", "check_run", `{"action":"rerequested","check_run":{"external_id":"` + build + `"},"sender":{"login":"octocat"}}`, 400, "bad_request"},
		{"bad sender", "check_run", `{"action":"rerequested","check_run":{"external_id":"` + build + `"},"installation":{"id":5},"sender":{"login":"a b"}}`, 400, "bad_request"},
		{"not JSON", "check_run", `{"action":`, 400, "not valid JSON"},
		{"unlinked installation", "check_run", `{"action":"rerequested","check_run":{"external_id":"` + build + `"},"installation":{"id":5},"sender":{"login":"octocat"}}`, 200, "no organization links"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/webhooks/github", strings.NewReader(c.body))
			req.Header.Set("X-GitHub-Event", c.event)
			req.Header.Set("X-GitHub-Delivery", "d-1")
			req.Header.Set("X-Hub-Signature-256", sign(c.body))
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != c.want || !strings.Contains(rec.Body.String(), c.says) {
				t.Fatalf("%d %s, want %d with %q", rec.Code, rec.Body.String(), c.want, c.says)
			}
		})
	}
}
