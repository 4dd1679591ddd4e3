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

	"github.com/kilnbuild/kiln/shared/socketio"
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
// a *HandshakeError or a dial error; the caller then falls back to polling.
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

// run reads the socket until it ends; a socket that dropped is dialled again and its builds
// joined again, until Close, a server disconnect, or Retries failed dials in a row.
func (c *Client) run(cn *conn) {
	for {
		err := c.serve(cn)
		cn.end(false)
		c.mu.Lock()
		closing := c.closing
		c.conn = nil
		c.mu.Unlock()
		switch {
		case closing:
			c.finish(ErrClosed)
			return
		case errors.Is(err, ErrServerDisconnect):
			c.finish(err)
			return
		}
		c.opts.Logger.Debug("live events: the connection dropped; reconnecting", slog.String("error", err.Error()))
		if cn, err = c.reconnect(); err != nil {
			c.finish(err)
			return
		}
	}
}

// reconnect dials again until it connects, is stopped, or gives up.
func (c *Client) reconnect() (*conn, error) {
	delay := c.opts.RetryDelay
	var last error
	for try := 0; try < c.opts.Retries; try++ {
		t := time.NewTimer(delay)
		select {
		case <-c.stop:
			t.Stop()
			return nil, ErrClosed
		case <-t.C:
		}
		delay = min(2*delay, c.opts.MaxRetryDelay)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-c.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		cn, err := c.open(ctx)
		cancel()
		var refused *ConnectError
		switch {
		case err == nil:
			c.mu.Lock()
			if c.closing {
				c.mu.Unlock()
				cn.end(true)
				return nil, ErrClosed
			}
			c.conn = cn
			c.mu.Unlock()
			go c.rejoin(cn)
			return cn, nil
		case errors.As(err, &refused):
			return nil, err // the token no longer connects: trying again will not help
		}
		last = err
		c.opts.Logger.Debug("live events: reconnect failed", slog.Int("try", try+1), slog.String("error", err.Error()))
	}
	return nil, fmt.Errorf("live events: gave up reconnecting after %d tries: %w", c.opts.Retries, last)
}

// rejoin joins the watched builds on a new connection, each from its last line delivered. A
// refusal is delivered as an event; a connection lost meanwhile is the next reconnect's job.
func (c *Client) rejoin(cn *conn) {
	c.mu.Lock()
	ids := make(map[string]*watch, len(c.watched))
	for id, w := range c.watched {
		ids[id] = w
	}
	c.mu.Unlock()
	for id, w := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.ConnectTimeout)
		err := c.join(ctx, cn, id, w)
		cancel()
		var refused *RefusedError
		if errors.As(err, &refused) {
			c.mu.Lock()
			if c.watched[id] == w {
				delete(c.watched, id)
				c.push(Event{Refused: refused})
			}
			c.mu.Unlock()
		}
	}
}

// serve reads a connection's packets until it ends: pings are answered, acknowledgements handed
// over, events queued.
func (c *Client) serve(cn *conn) error {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), cn.silence())
		typ, rest, err := cn.read(ctx)
		cancel()
		if err != nil {
			return err
		}
		switch typ {
		case socketio.EnginePing:
			if err := cn.write(context.Background(), string(socketio.EnginePong)+rest); err != nil {
				return err
			}
			continue
		case socketio.EngineClose:
			return errors.New("the server closed the transport")
		case socketio.EngineMessage:
		default:
			continue
		}
		p, err := socketio.ParsePacket(rest)
		if err != nil {
			return err
		}
		if p.Namespace != socketio.DefaultNamespace {
			continue
		}
		switch p.Type {
		case socketio.Disconnect:
			return ErrServerDisconnect
		case socketio.Ack:
			cn.acked(p.ID, p.Data)
		case socketio.Event:
			c.event(p)
		}
	}
}

// event queues a build:log, build:status or build:error of a watched build. A line at or before
// the last one delivered (a replay overlapping what came before a reconnect) is dropped, and so
// is a status that did not change.
func (c *Client) event(p socketio.Packet) {
	name, args, err := p.EventName()
	if err != nil || len(args) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch name {
	case "build:log":
		var l Line
		if json.Unmarshal(args[0], &l) != nil {
			return
		}
		w := c.watched[l.BuildID]
		if w == nil || (w.hasFrom && l.Seq <= w.from) {
			return
		}
		w.from, w.hasFrom = l.Seq, true
		c.push(Event{Log: &l})
	case "build:status":
		var s Status
		if json.Unmarshal(args[0], &s) != nil {
			return
		}
		w := c.watched[s.BuildID]
		if w == nil || w.status == s.Status {
			return
		}
		w.status = s.Status
		c.push(Event{Status: &s})
	case "build:error":
		var r RefusedError
		var e struct {
			BuildID string `json:"buildId"`
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if json.Unmarshal(args[0], &e) != nil {
			return
		}
		r = RefusedError{BuildID: e.BuildID, Code: e.Error, Message: e.Message}
		delete(c.watched, e.BuildID)
		c.push(Event{Refused: &r})
	}
}
