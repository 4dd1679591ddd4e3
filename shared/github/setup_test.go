package github

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// clock is a test clock shared by the client and the fake.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fixture struct {
	gh    *githubtest.Server
	c     *Client
	clock *clock
}

// The installations of the fixtures.
const (
	studio    int64 = 1
	elsewhere int64 = 2
)

// newFixture starts a fake GitHub with two installations and no repositories, and a client of it.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := githubtest.New(t)
	clk := &clock{t: time.Now().Truncate(time.Second)}
	srv.SetNow(clk.Now)
	srv.AddInstallation(studio, "studio")
	srv.AddInstallation(elsewhere, "elsewhere")
	return &fixture{gh: srv, c: newClient(t, srv, clk.Now), clock: clk}
}

func newClient(t *testing.T, srv *githubtest.Server, now func() time.Time) *Client {
	t.Helper()
	c, err := New(Config{
		APIURL: srv.URL(), WebURL: srv.WebURL(), AppID: srv.AppID, PrivateKeyPEM: srv.PrivateKeyPEM,
		ClientID: srv.ClientID, ClientSecret: srv.ClientSecret, HTTPClient: srv.Client(), Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantCode fails unless err carries code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if !kiln.IsCode(err, code) {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

const uprojectJSON = `{
	"FileVersion": 3,
	"EngineAssociation": "5.3",
	"Category": "",
	"Modules": [{"Name": "Shooter", "Type": "Runtime", "LoadingPhase": "Default"}],
	"Plugins": [{"Name": "ModelingToolsEditorMode", "Enabled": true, "TargetAllowList": ["Editor"]}]
}`

func errorsAs(err error, target **kiln.Error) bool { return errors.As(err, target) }
