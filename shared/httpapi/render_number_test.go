package httpapi

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// A build's number is in the build resource and in webhook payloads; a build from before builds
// were numbered has number null.
func TestBuildNumberIsRendered(t *testing.T) {
	noProject := func(context.Context, string, string) (*kiln.Project, error) { return nil, kiln.NotFound("project") }
	cases := []struct {
		number int64
		want   string
	}{
		{0, "null"},
		{1, "1"},
		{417, "417"},
	}
	for _, c := range cases {
		b := &kiln.Build{ID: kiln.NewID(), OrganizationID: kiln.NewID(), Number: c.number, Status: kiln.StatusPending, CreatedAt: time.Now()}
		var resource map[string]json.RawMessage
		body, _ := json.Marshal(renderBuild(b))
		if err := json.Unmarshal(body, &resource); err != nil {
			t.Fatal(err)
		}
		if got := string(resource["number"]); got != c.want {
			t.Errorf("number %d: build resource has number %s, want %s", c.number, got, c.want)
		}
		payload, err := RenderWebhookEvent(noProject)(t.Context(), kiln.WebhookEvent("build.completed"), b, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var event struct {
			Data struct {
				Build map[string]json.RawMessage `json:"build"`
			} `json:"data"`
		}
		if err := json.Unmarshal(payload, &event); err != nil {
			t.Fatal(err)
		}
		if got := string(event.Data.Build["number"]); got != c.want {
			t.Errorf("number %d: webhook payload has number %s, want %s", c.number, got, c.want)
		}
	}
}
