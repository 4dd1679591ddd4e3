package e2e

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// testAgent is `kiln agent` run in-process against a test service: an AgentLoop whose hosts
// build with the world's engines. kill cuts its network, as if the machine died.
type testAgent struct {
	cancel context.CancelFunc
	Done   chan error
	dead   atomic.Bool
	// stopOnce waits for the loop's end once, by stop or by a test reading done.
	StopOnce sync.Once
	mu       sync.Mutex
	builds   []string // the builds it claimed, in order
}

// killable fails every request once the agent is killed.
type killable struct{ a *testAgent }

func (k killable) RoundTrip(r *http.Request) (*http.Response, error) {
	if k.a.dead.Load() {
		return nil, errors.New("the agent's machine is gone")
	}
	return http.DefaultTransport.RoundTrip(r)
}

func StartAgent(t *testing.T, w *World, token string, platforms ...string) *testAgent {
	t.Helper()
	if len(platforms) == 0 {
		platforms = []string{"Win64", "Linux"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &testAgent{cancel: cancel, Done: make(chan error, 1)}
	client := &http.Client{Transport: killable{a}, Timeout: 2 * time.Minute}
	loop := &hostclient.AgentLoop{
		URL: w.URL(), Token: token, Platforms: platforms, EngineVersions: []string{"5.3", "5.4"},
		Wait: time.Second, HTTP: client, RetryEvery: 50 * time.Millisecond, Logger: DiscardLogger(),
		NewHost: func(c *hostclient.Client) *hostclient.Host {
			if _, id, err := hostcred.Parse(c.Credential); err == nil {
				a.mu.Lock()
				a.builds = append(a.builds, id)
				a.mu.Unlock()
			}
			return &hostclient.Host{
				Client: c, Engines: engines.Dir{Path: w.Config.Engines}, Steps: &buildsteps.Steps{Logger: DiscardLogger()},
				WorkDir: t.TempDir(), HeartbeatEvery: 200 * time.Millisecond, Logger: DiscardLogger(),
			}
		},
	}
	go func() { a.Done <- loop.Run(ctx) }()
	t.Cleanup(a.Stop)
	return a
}

// stop stops the agent and waits for it (once: the loop ends once).
func (a *testAgent) Stop() {
	a.cancel()
	a.StopOnce.Do(func() {
		select {
		case <-a.Done:
		case <-time.After(30 * time.Second):
		}
	})
}

func (a *testAgent) Kill() { a.dead.Store(true) }

func (a *testAgent) Claimed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.builds)
}

func (a *testAgent) Ran(id string) bool { return slices.Contains(a.Claimed(), id) }

// errorsUnwrapAll finds the *kiln.Error in err's chain, or returns err.
func ErrorsUnwrapAll(err error) error {
	var ke *kiln.Error
	if errors.As(err, &ke) {
		return ke
	}
	return err
}

// agentMidBuild starts an agent of pool "win" and a slow build of its pool, and returns once
// the agent checked the build out: the world, the agent's id, the agent and the build's id.
func AgentMidBuild(t *testing.T) (w *World, agentID string, a *testAgent, build string) {
	t.Helper()
	w = NewWorld(t, Serve)
	project := w.AddShooter(t)
	w.Shooter.Commit("main", "Slow", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	agentID, token := CreateAgent(t, w.Server, w.Token, w.OrgID, "box", "win")
	a = StartAgent(t, w, token)
	build = TriggerAs(t, w, w.Token, project, PoolSetting(t, w, w.Token, project, "win", "Shipping"))
	w.WaitBuild(t, build, "checked out on the agent", func(b map[string]any) bool { return b["status"] == "running" && b["commit"] != nil })
	return w, agentID, a, build
}
