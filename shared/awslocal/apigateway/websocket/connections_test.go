package websocket

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi/types"
	ws "github.com/coder/websocket"
)

// TestPostToConnection: through the AWS SDK, a post reaches the client as one message (text, or
// binary when it is not UTF-8; one over 32 KB in several frames), GetConnection describes the
// connection, a post over 128 KB is PayloadTooLargeException, and once the client is gone (or
// for an id never connected) every call is GoneException.
func TestPostToConnection(t *testing.T) {
	var mu sync.Mutex
	var billed Usage
	w := newWorld(t, func(g *Gateway) {
		g.Meter = func(u Usage) {
			mu.Lock()
			billed.Messages += u.Messages
			billed.ConnectionMinutes += u.ConnectionMinutes
			mu.Unlock()
		}
	})
	c, connect := w.dial(t, "")
	c.SetReadLimit(MaxMessage)
	id := connect.RequestContext.ConnectionID
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		data []byte
		typ  ws.MessageType
	}{
		{"text", []byte(`0{"sid":"x"}`), ws.MessageText},
		{"binary", []byte{0xff, 0xfe, 0}, ws.MessageBinary},
		{"128 KB in frames", bytes.Repeat([]byte("a"), MaxMessage), ws.MessageText},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := w.post(ctx, id, tt.data); err != nil {
				t.Fatal(err)
			}
			typ, got, err := c.Read(ctx)
			if err != nil || typ != tt.typ || !bytes.Equal(got, tt.data) {
				t.Fatalf("read %v %d bytes %v, want %v %d bytes", typ, len(got), err, tt.typ, len(tt.data))
			}
		})
	}
	out, err := w.client.GetConnection(ctx, &apigatewaymanagementapi.GetConnectionInput{ConnectionId: aws.String(id)})
	if err != nil || out.ConnectedAt == nil || out.LastActiveAt == nil || out.Identity == nil || aws.ToString(out.Identity.SourceIp) != "127.0.0.1" {
		t.Fatalf("GetConnection: %+v %v", out, err)
	}
	var tooLarge *types.PayloadTooLargeException
	if err := w.post(ctx, id, bytes.Repeat([]byte("a"), MaxMessage+1)); !errors.As(err, &tooLarge) {
		t.Fatalf("a post over 128 KB: %v, want PayloadTooLargeException", err)
	}
	c.Close(ws.StatusNormalClosure, "")
	if ev := w.fn.next(t); ev.RequestContext.RouteKey != "$disconnect" {
		t.Fatalf("after the close: %s", ev.RequestContext.RouteKey)
	}
	mu.Lock()
	got := billed
	mu.Unlock()
	if got.Messages != 1+1+4 || got.ConnectionMinutes <= 0 { // 128 KB is four 32 KB messages
		t.Errorf("metered %+v, want 6 messages and the connection's minutes", got)
	}
	for _, id := range []string{id, "bm90LWFuLWlkLXg="} {
		var gone *types.GoneException
		if err := w.post(ctx, id, []byte("late")); !errors.As(err, &gone) {
			t.Errorf("post to %s: %v, want GoneException", id, err)
		}
		if _, err := w.client.GetConnection(ctx, &apigatewaymanagementapi.GetConnectionInput{ConnectionId: aws.String(id)}); !errors.As(err, &gone) {
			t.Errorf("GetConnection %s: %v, want GoneException", id, err)
		}
	}
}

// TestDeleteConnection: DeleteConnection closes the client's connection, and $disconnect follows.
func TestDeleteConnection(t *testing.T) {
	w := newWorld(t, nil)
	c, connect := w.dial(t, "")
	ctx := context.Background()
	if _, err := w.client.DeleteConnection(ctx, &apigatewaymanagementapi.DeleteConnectionInput{ConnectionId: aws.String(connect.RequestContext.ConnectionID)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); ws.CloseStatus(err) != ws.StatusNormalClosure {
		t.Fatalf("the client read %v, want a close 1000", err)
	}
	if ev := w.fn.next(t); ev.RequestContext.RouteKey != "$disconnect" || ev.RequestContext.DisconnectStatusCode != 1000 {
		t.Fatalf("after DeleteConnection: %s %d", ev.RequestContext.RouteKey, ev.RequestContext.DisconnectStatusCode)
	}
}

// TestManageConnectionsIsChecked: a caller whose role lacks execute-api:ManageConnections on
// the stage (the api function of the test template), or whose key belongs to no role, is
// refused with ForbiddenException (the SDK's type has no message; aws-local's log says which
// action on which resource), and nothing reaches the client.
func TestManageConnectionsIsChecked(t *testing.T) {
	w := newWorld(t, nil)
	c, connect := w.dial(t, "")
	id := connect.RequestContext.ConnectionID
	ctx := context.Background()
	for _, key := range []string{"KEY-api", "KEY-nobody"} {
		t.Run(key, func(t *testing.T) {
			_, err := w0client(w.g.Endpoint(w.srv.URL), key).PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: aws.String(id), Data: []byte("x")})
			var forbidden *types.ForbiddenException
			if !errors.As(err, &forbidden) {
				t.Fatalf("post: %v, want ForbiddenException", err)
			}
		})
	}
	// The live function may: its post is the first message the client reads.
	if err := w.post(ctx, id, []byte("allowed")); err != nil {
		t.Fatal(err)
	}
	if _, got, err := c.Read(ctx); err != nil || string(got) != "allowed" {
		t.Fatalf("read %q %v", got, err)
	}
}

// TestQuotas: a frame over 32 KB or a message over 128 KB from the client closes the connection
// with 1009 without reaching $default; a connection idle for IdleTimeout, or open for
// MaxDuration although active, is closed with 1001.
func TestQuotas(t *testing.T) {
	for _, tt := range []struct {
		name  string
		send  func(ctx context.Context, c *ws.Conn) error
		want  ws.StatusCode
		after time.Duration // how long the connection lasts at least
	}{
		{"frame over 32 KB", func(ctx context.Context, c *ws.Conn) error {
			return c.Write(ctx, ws.MessageText, bytes.Repeat([]byte("a"), MaxFrame+1))
		}, ws.StatusMessageTooBig, 0},
		{"message over 128 KB in small frames", func(ctx context.Context, c *ws.Conn) error {
			wr, err := c.Writer(ctx, ws.MessageText)
			if err != nil {
				return err
			}
			for range 5 {
				if _, err := wr.Write(bytes.Repeat([]byte("a"), 30<<10)); err != nil {
					return err
				}
			}
			return wr.Close()
		}, ws.StatusMessageTooBig, 0},
		{"idle", func(context.Context, *ws.Conn) error { return nil }, ws.StatusGoingAway, 150 * time.Millisecond},
		{"duration", func(ctx context.Context, c *ws.Conn) error {
			for range 20 { // active every 30 ms: never idle for 150 ms
				if err := c.Write(ctx, ws.MessageText, []byte("3")); err != nil {
					return nil // closed at the duration
				}
				time.Sleep(30 * time.Millisecond)
			}
			return nil
		}, ws.StatusGoingAway, 400 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, func(g *Gateway) { g.IdleTimeout, g.MaxDuration = 150*time.Millisecond, 400*time.Millisecond })
			start := time.Now()
			c, _ := w.dial(t, "")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				for {
					if _, _, err := c.Read(ctx); err != nil {
						done <- err
						return
					}
				}
			}()
			if err := tt.send(ctx, c); err != nil && tt.want != ws.StatusMessageTooBig {
				t.Fatal(err)
			}
			err := <-done
			if ws.CloseStatus(err) != tt.want || time.Since(start) < tt.after {
				t.Fatalf("closed after %v with %v, want %d after %v at least", time.Since(start), err, tt.want, tt.after)
			}
			var disconnect bool
			for !disconnect {
				ev := w.fn.next(t)
				switch ev.RequestContext.RouteKey {
				case "$disconnect":
					disconnect = true
					if ev.RequestContext.DisconnectStatusCode != int64(tt.want) {
						t.Errorf("$disconnect with %d, want %d", ev.RequestContext.DisconnectStatusCode, tt.want)
					}
				case "$default":
					if len(ev.Body) > MaxFrame {
						t.Errorf("a message of %d bytes reached $default", len(ev.Body))
					}
				}
			}
		})
	}
}
