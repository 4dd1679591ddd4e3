package httpapi

import (
	"maps"
	"testing"
)

func TestRequestFieldsNeverShowSecrets(t *testing.T) {
	for _, tc := range []struct {
		body string
		want map[string]string
	}{
		{`{"serverUrl":"ssl:p4:1666","userName":"builder","ticket":"ABCDEF0123"}`,
			map[string]string{"serverUrl": "ssl:p4:1666", "userName": "builder", "ticket": "set"}},
		{`{"url":"https://hooks.slack.com/services/T/B/x","events":["build.failed","build.fixed"],"format":"slack"}`,
			map[string]string{"url": "set", "events": "build.failed,build.fixed", "format": "slack"}},
		{`{"name":"ci","expiresInDays":30}`, map[string]string{"name": "ci", "expiresInDays": "30"}},
		{`{"autoDeploy":{"url":"https://host/x","headers":{"Authorization":"Bearer s3cret"}},"platform":"Linux"}`,
			map[string]string{"autoDeploy.url": "set", "autoDeploy.headers.Authorization": "set", "platform": "Linux"}},
		{`{"description":null}`, map[string]string{"description": "cleared"}},
		{`not json`, map[string]string{}},
		{``, map[string]string{}},
	} {
		if got := requestFields([]byte(tc.body)); !maps.Equal(got, tc.want) {
			t.Errorf("requestFields(%s) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

func TestLastWildcard(t *testing.T) {
	for pattern, want := range map[string]string{
		"PATCH /organizations/{id}/members/{userId}": "userId",
		"PATCH /organizations/{id}":                  "id",
		"POST /projects/add-repo":                    "",
	} {
		if got := lastWildcard(pattern); got != want {
			t.Errorf("lastWildcard(%q) = %q, want %q", pattern, got, want)
		}
	}
}
