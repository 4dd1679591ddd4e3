package hostclient_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// taskBeats records the task tokens the host API passes on, answering err.
type taskBeats struct {
	mu     sync.Mutex
	tokens []string
	err    error
}

func (b *taskBeats) SendTaskHeartbeat(ctx context.Context, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = append(b.tokens, token)
	return b.err
}

// TestHeartbeatPassesTheTaskTokenOn: a heartbeat with a task token is passed on to Step
// Functions once, with that token; without a token, or without TaskHeartbeats, nothing is; a
// failure to pass it on is logged without the token and never fails the host's heartbeat.
func TestHeartbeatPassesTheTaskTokenOn(t *testing.T) {
	const token = "AQB8AAAAKgAAAAMAAAAAAAAAAS3cr3tT0k3n"
	tests := []struct {
		name  string
		token string
		beats *taskBeats // nil: the server has no TaskHeartbeats
		want  []string
	}{
		{name: "with a token", token: token, beats: &taskBeats{}, want: []string{token}},
		{name: "without a token", beats: &taskBeats{}},
		{name: "without TaskHeartbeats", token: token},
		{name: "Step Functions refuses", token: token, beats: &taskBeats{err: errors.New("TaskTimedOut: Task Timed Out: '" + token + "'")}, want: []string{token}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newService(t)
			var logs bytes.Buffer
			s.server.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			if tt.beats != nil {
				s.server.TaskHeartbeats = tt.beats
			}
			b, cred := s.claimed(t, s.project, s.setting)
			c := &hostclient.Client{BaseURL: s.api.URL, Credential: cred, TaskToken: tt.token}
			if err := c.Heartbeat(t.Context()); err != nil {
				t.Fatalf("heartbeat: %v", err)
			}
			if got := s.build(t, b.ID); got.HeartbeatAt == nil {
				t.Errorf("the build's heartbeat was not recorded: %v", got.HeartbeatAt)
			}
			if tt.beats != nil && !slices.Equal(tt.beats.tokens, tt.want) {
				t.Errorf("SendTaskHeartbeat got %q, want %q", tt.beats.tokens, tt.want)
			}
			if tt.beats != nil && tt.beats.err != nil && !strings.Contains(logs.String(), "Step Functions") {
				t.Errorf("the refusal was not logged: %s", logs.String())
			}
			if strings.Contains(logs.String(), token) {
				t.Errorf("the task token was logged: %s", logs.String())
			}
		})
	}
}

// TestHeartbeatRefusesAnOverlongTaskToken: a token longer than any Step Functions issues is a
// validation error, and passes nothing on.
func TestHeartbeatRefusesAnOverlongTaskToken(t *testing.T) {
	s := newService(t)
	beats := &taskBeats{}
	s.server.TaskHeartbeats = beats
	_, cred := s.claimed(t, s.project, s.setting)
	c := &hostclient.Client{BaseURL: s.api.URL, Credential: cred, TaskToken: strings.Repeat("A", agentapi.MaxTaskToken+1)}
	if err := c.Heartbeat(t.Context()); !kiln.IsCode(err, kiln.EValidation) || len(beats.tokens) != 0 {
		t.Errorf("heartbeat: %v, passed on %d tokens; want a validation error and none", err, len(beats.tokens))
	}
}
