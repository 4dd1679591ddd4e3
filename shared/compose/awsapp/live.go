package awsapp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/kilnbuild/kiln/shared/compose/core"
	"github.com/kilnbuild/kiln/shared/live"
)

// Live events in AWS: API Gateway's WebSocket API holds the sockets and invokes the live
// function for each of $connect, $disconnect and every message ($default); every function that
// writes log lines or changes a build's status sends to the sockets through the @connections API.
// Engine.IO's pings come from the schedule function, each minute, within API Gateway's 10-minute
// idle timeout; the sockets are told so in the open packet.
const (
	// LivePingInterval and LivePingTimeout are the Engine.IO ping times of the AWS deployment: the
	// schedule function pings each minute, and a client that heard nothing for both together
	// (two minutes) reconnects.
	LivePingInterval = time.Minute
	LivePingTimeout  = time.Minute
	// LiveMaxPayload is the largest message a client may send: API Gateway's WebSocket frame
	// size (32 KB).
	LiveMaxPayload = 32 << 10
	// greetWait bounds how long the greeting waits for API Gateway to establish the connection
	// (a post before $connect has answered is refused as gone).
	greetWait = 5 * time.Second
)

// Greeter asks for a socket's greeting (Engine.IO's open packet) once its $connect has been
// answered: a Lambda cannot post to a connection during its own $connect. In AWS it invokes the
// live function again, asynchronously, with a Greeting.
type Greeter interface {
	Greet(ctx context.Context, connID string) error
}

// Greeting is the live function's own event: greet the socket.
type Greeting struct {
	Greet string `json:"greet"`
}

// LiveFunction is the live function's handler.
type LiveFunction struct {
	Live    *live.Service
	Greeter Greeter
	Logger  *slog.Logger
}

// newLiveService sets the AWS deployment's Engine.IO promises on a core's live service.
func newLiveService(c *core.Core) (*live.Service, error) {
	if c.Live == nil {
		return nil, errors.New("live events: no WebSocket API is configured (KILN_LIVE_ENDPOINT)")
	}
	c.Live.Pings = live.Pings{Interval: LivePingInterval, Timeout: LivePingTimeout}
	c.Live.MaxPayload = LiveMaxPayload
	return c.Live, nil
}

// Handle serves a WebSocket API route event or a Greeting.
func (f *LiveFunction) Handle(ctx context.Context, raw json.RawMessage) (*events.APIGatewayProxyResponse, error) {
	var g Greeting
	if err := json.Unmarshal(raw, &g); err == nil && g.Greet != "" {
		return nil, f.greet(ctx, g.Greet)
	}
	var ev events.APIGatewayWebsocketProxyRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, fmt.Errorf("live: not a WebSocket API event: %w", err)
	}
	id := ev.RequestContext.ConnectionID
	switch ev.RequestContext.RouteKey {
	case "$connect":
		q := url.Values{}
		for k, vs := range ev.MultiValueQueryStringParameters {
			q[k] = vs
		}
		for k, v := range ev.QueryStringParameters {
			if _, ok := q[k]; !ok {
				q.Set(k, v)
			}
		}
		if code, msg, ok := live.HandshakeError(q); !ok {
			body, _ := json.Marshal(map[string]any{"code": code, "message": msg})
			return &events.APIGatewayProxyResponse{StatusCode: 400, Body: string(body), Headers: map[string]string{"Content-Type": "application/json"}}, nil
		}
		if err := f.Live.Open(ctx, id); err != nil {
			return nil, err
		}
		if err := f.Greeter.Greet(ctx, id); err != nil {
			_ = f.Live.Closed(ctx, id)
			return nil, fmt.Errorf("live: ask for the greeting of %s: %w", id, err)
		}
	case "$disconnect":
		if err := f.Live.Closed(ctx, id); err != nil {
			return nil, err
		}
	default:
		body := ev.Body
		if ev.IsBase64Encoded {
			// Binary: kiln's protocol has none; Receive closes the socket for it.
			if _, err := base64.StdEncoding.DecodeString(body); err == nil {
				body = ""
			}
		}
		if err := f.Live.Receive(ctx, id, body); err != nil {
			return nil, err
		}
	}
	return &events.APIGatewayProxyResponse{StatusCode: 200}, nil
}

// greet sends the open packet, waiting for API Gateway to finish the $connect.
func (f *LiveFunction) greet(ctx context.Context, connID string) error {
	deadline := time.Now().Add(greetWait)
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		err := f.Live.Greet(ctx, connID)
		if !errors.Is(err, live.ErrGone) {
			return err
		}
		if time.Now().After(deadline) {
			// Never established (the client left during $connect), or gone since.
			return f.Live.Closed(ctx, connID)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}
