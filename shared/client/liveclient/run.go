package liveclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/socketio"
)

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
