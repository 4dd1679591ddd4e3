package live

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/client/liveclient"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestGoClientStreamsABuild: the kiln command's Go client (shared/client/liveclient) joins a
// running build from seq 0 and gets its status and every line in order until complete, as the
// stock socket.io-client does, on both deployments.
func TestGoClientStreamsABuild(t *testing.T) {
	e2e.Both(t, goClientStreamsABuild)
}

func goClientStreamsABuild(t *testing.T, d e2e.Deployment) {
	w := e2e.NewWorld(t, d)
	id := slowBuild(t, w, "FAKE_UAT_SLEEP=1\n")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := liveclient.Dial(ctx, w.URL(), w.Token, liveclient.Options{})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if err := c.Join(ctx, id, 0); err != nil {
		t.Fatalf("Join: %v", err)
	}
	var lines []e2e.LogLine
	var statuses []string
	for len(statuses) == 0 || statuses[len(statuses)-1] != "complete" {
		e, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("Next after %d lines and statuses %v: %v", len(lines), statuses, err)
		}
		switch {
		case e.Log != nil:
			lines = append(lines, *e.Log)
		case e.Status != nil:
			if e.Status.BuildID != id || e.Status.ProjectID == "" || e.Status.Number == nil || *e.Status.Number != 1 {
				t.Fatalf("build:status %+v", *e.Status)
			}
			statuses = append(statuses, e.Status.Status)
		case e.Refused != nil:
			t.Fatalf("refused: %v", e.Refused)
		}
	}
	wantWholeLog(t, w, id, lines)
}
