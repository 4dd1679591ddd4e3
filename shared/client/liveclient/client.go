// Package liveclient is a small Socket.IO v4 client (Engine.IO 4, WebSocket transport only) of
// kiln's live build events at <base URL>/socket.io/, as the kiln command uses it to follow a
// build: it connects with a token, joins builds from a log seq, and delivers their build:log and
// build:status events in order. A dropped connection is dialled again and every build joined
// again from the last line delivered, so no line is lost or repeated across a reconnect.
//
// The protocol is in docs/api.md ("Live build events"); packets are encoded by package socketio.
package liveclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Options tune a client; the zero value is fine.
type Options struct {
	// HTTPClient dials the WebSocket (nil: http.DefaultClient). It must have no Timeout.
	HTTPClient *http.Client
	// ConnectTimeout bounds a dial through the accepted CONNECT (default 15 s).
	ConnectTimeout time.Duration
	// Retries is how many reconnects in a row are tried before the client gives up (default 8),
	// waiting RetryDelay after the first failure and twice as long after each next one, at most
	// MaxRetryDelay (defaults 500 ms and 5 s).
	Retries       int
	RetryDelay    time.Duration
	MaxRetryDelay time.Duration
	Logger        *slog.Logger
}

func (o *Options) defaults() {
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 15 * time.Second
	}
	if o.Retries <= 0 {
		o.Retries = 8
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 500 * time.Millisecond
	}
	if o.MaxRetryDelay <= 0 {
		o.MaxRetryDelay = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Client is a connected socket. Its methods may be called from several goroutines; Next
// from one at a time.
type Client struct {
	url   string
	token string
	opts  Options

	mu      sync.Mutex
	conn    *conn // nil while reconnecting
	watched map[string]*watch
	queue   []Event
	err     error // why the client ended, once it did
	closing bool
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// watch is a joined build: where its log was delivered up to, and its last status.
type watch struct {
	from    int64 // the last seq delivered (or asked for); valid when hasFrom
	hasFrom bool
	status  string
}

// Dial connects to the live events of the API at baseURL (http or https) with token: it waits
// for Engine.IO's open packet and the server's answer to CONNECT. A refusal is a
// *ConnectError, a server without live events (or behind a proxy that does not pass WebSockets)
// a *HandshakeError or a dial error; the caller then falls back to polling. ctx bounds the dial
// alone: the client lives until Close.
func Dial(ctx context.Context, baseURL, token string, opts Options) (*Client, error) {
	opts.defaults()
	u, err := SocketURL(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{url: u, token: token, opts: opts, watched: map[string]*watch{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	first, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	c.conn = first
	go c.run(first)
	return c, nil
}

// SocketURL is the WebSocket address of the live events of the API at baseURL.
func SocketURL(baseURL string) (string, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("live events: the kiln URL %q is not an http(s) URL", baseURL)
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("live events: the kiln URL %q is not an http(s) URL", baseURL)
	}
	u.Path += "/socket.io/"
	u.RawQuery = url.Values{"EIO": {"4"}, "transport": {"websocket"}}.Encode()
	return u.String(), nil
}

func (c *Client) open(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.ConnectTimeout)
	defer cancel()
	return open(ctx, c.url, c.token, c.opts.HTTPClient)
}

// Join watches a build: its lines after fromSeq are replayed (0: the whole log; NoReplay: only
// lines written from now), then its status, then every line and change as they come. It
// returns once the server accepted; a refusal is a *RefusedError.
func (c *Client) Join(ctx context.Context, buildID string, fromSeq int64) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	w := &watch{from: fromSeq, hasFrom: fromSeq >= 0}
	c.watched[buildID] = w
	cn := c.conn
	c.mu.Unlock()
	err := errConnLost
	if cn != nil {
		err = c.join(ctx, cn, buildID, w)
	}
	if err != nil {
		c.mu.Lock()
		if c.watched[buildID] == w {
			delete(c.watched, buildID)
		}
		c.mu.Unlock()
		if errors.Is(err, errConnLost) {
			return fmt.Errorf("live events: join %s: %w", buildID, err)
		}
		return err
	}
	return nil
}

// NoReplay joins a build without replaying its log: only lines written after the join come.
const NoReplay = -1

// join sends join:build for a watched build, from the last line delivered.
func (c *Client) join(ctx context.Context, cn *conn, buildID string, w *watch) error {
	req := map[string]any{"buildId": buildID}
	c.mu.Lock()
	if w.hasFrom {
		req["fromSeq"] = w.from
	}
	c.mu.Unlock()
	args, err := cn.emit(ctx, "join:build", req)
	if err != nil {
		return err
	}
	var answer struct {
		OK      bool   `json:"ok"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if len(args) > 0 {
		_ = json.Unmarshal(args[0], &answer)
	}
	if !answer.OK {
		return &RefusedError{BuildID: buildID, Code: answer.Error, Message: answer.Message}
	}
	return nil
}

// Leave stops watching a build.
func (c *Client) Leave(ctx context.Context, buildID string) error {
	c.mu.Lock()
	delete(c.watched, buildID)
	cn := c.conn
	c.mu.Unlock()
	if cn == nil {
		return nil // not connected: the next connection does not join it
	}
	if _, err := cn.emit(ctx, "leave:build", map[string]string{"buildId": buildID}); err != nil && !errors.Is(err, errConnLost) {
		return err
	}
	return nil
}

// Next returns the next event, waiting for one. Once the client ended (Close, a server
// disconnect, or reconnects that kept failing) and every event was taken, it returns why:
// ErrClosed, ErrServerDisconnect, or the last reconnect's error.
func (c *Client) Next(ctx context.Context) (Event, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			e := c.queue[0]
			c.queue[0] = Event{}
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return e, nil
		}
		err := c.err
		c.mu.Unlock()
		if err != nil {
			return Event{}, err
		}
		select {
		case <-c.wake:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Close disconnects (a Socket.IO disconnect, then a normal WebSocket close) and ends the client.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		<-c.done
		return nil
	}
	c.closing = true
	cn := c.conn
	c.mu.Unlock()
	close(c.stop)
	if cn != nil {
		cn.end(true)
	}
	<-c.done
	return nil
}

// push queues an event for Next.
func (c *Client) push(e Event) {
	c.queue = append(c.queue, e)
	c.signal()
}

func (c *Client) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// finish ends the client with err (Next returns it once the queue is empty).
func (c *Client) finish(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.conn = nil
	c.mu.Unlock()
	c.signal()
	close(c.done)
}
