package websocket

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	ws "github.com/coder/websocket"
)

// Close codes API Gateway sends.
const (
	statusGoingAway  = ws.StatusGoingAway     // idle timeout, connection duration, shutdown
	statusTooBig     = ws.StatusMessageTooBig // a frame over 32 KB or a message over 128 KB
	statusNormal     = ws.StatusNormalClosure // DeleteConnection
	integrationLimit = 29 * time.Second       // the $connect integration timeout
)

// conn is one open connection.
type conn struct {
	g                   *Gateway
	id                  string
	ws                  *ws.Conn
	frames              *frameWatch
	connectedAt         time.Time
	sourceIP, userAgent string
	host                string // the API's domain name as the events tell it

	mu         sync.Mutex
	lastActive time.Time
	endCode    ws.StatusCode // set when this side closes
	endReason  string
	activity   chan struct{}
	ready      chan struct{} // closed once the upgrade ended (ws set if it succeeded)
	done       chan struct{}
}

// serveUpgrade runs $connect and, when it answers 2xx, accepts the upgrade and serves the
// connection until either side closes it.
func (g *Gateway) serveUpgrade(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", "websocket") {
		writeError(w, http.StatusUpgradeRequired, "", "Upgrade Required")
		return
	}
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		writeError(w, http.StatusServiceUnavailable, "", "Service Unavailable")
		return
	}
	sourceIP, _, _ := net.SplitHostPort(r.RemoteAddr)
	c := &conn{g: g, id: newConnectionID(), connectedAt: time.Now(), sourceIP: sourceIP, userAgent: r.UserAgent(), host: g.domain(r.Host),
		activity: make(chan struct{}, 1), ready: make(chan struct{}), done: make(chan struct{})}
	c.lastActive = c.connectedAt
	resp, err := g.invokeConnect(r.Context(), c, r)
	if err != nil {
		g.logger.ErrorContext(r.Context(), "websocket api: the $connect invocation failed", slog.String("connection_id", c.id), slog.String("error", err.Error()))
		writeError(w, http.StatusInternalServerError, "", "Internal server error")
		return
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// API Gateway answers the upgrade with the function's status and body.
		for k, v := range resp.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write([]byte(resp.Body))
		return
	}
	opts := &ws.AcceptOptions{InsecureSkipVerify: true, CompressionMode: ws.CompressionDisabled}
	for k, v := range resp.Headers {
		if http.CanonicalHeaderKey(k) == "Sec-Websocket-Protocol" {
			opts.Subprotocols = []string{v}
		} else {
			w.Header().Set(k, v)
		}
	}
	// The connection exists from here on: a post waits for the upgrade's end (the client may
	// see the 101 and have a post made before Accept returns).
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "", "Service Unavailable")
		g.invokeDisconnect(c, int64(statusGoingAway), "Going away")
		return
	}
	g.conns[c.id] = c
	g.wg.Add(1)
	g.mu.Unlock()
	c.frames = &frameWatch{max: MaxFrame}
	wc, err := ws.Accept(&hijacker{ResponseWriter: w, watch: c.frames}, r, opts)
	if err != nil {
		g.logger.WarnContext(r.Context(), "websocket api: the upgrade failed after $connect", slog.String("connection_id", c.id), slog.String("error", err.Error()))
		g.mu.Lock()
		delete(g.conns, c.id)
		g.mu.Unlock()
		close(c.ready)
		close(c.done)
		g.invokeDisconnect(c, int64(ws.StatusAbnormalClosure), "the upgrade failed")
		g.wg.Done()
		return
	}
	wc.SetReadLimit(MaxMessage)
	c.ws = wc
	close(c.ready)
	go c.watch()
	c.serve()
}

// serve hands each message to $default, in order, until the connection ends; then $disconnect.
func (c *conn) serve() {
	defer c.g.wg.Done()
	var err error
	for {
		var typ ws.MessageType
		var data []byte
		typ, data, err = c.ws.Read(context.Background())
		if err != nil {
			break
		}
		if c.frames.exceeded() {
			c.end(statusTooBig, "Message too big")
			continue // the read fails once the close handshake is done
		}
		c.touch()
		c.g.meter(Usage{Messages: messages(len(data))})
		c.g.invokeDefault(c, typ, data)
	}
	c.g.mu.Lock()
	delete(c.g.conns, c.id)
	c.g.mu.Unlock()
	close(c.done)
	c.g.meter(Usage{ConnectionMinutes: time.Since(c.connectedAt).Minutes()})
	c.mu.Lock()
	code, reason := c.endCode, c.endReason
	c.mu.Unlock()
	if code == 0 { // the client closed (or went away without a close frame: 1006)
		code = ws.CloseStatus(err)
		var ce ws.CloseError
		if errors.As(err, &ce) {
			reason = ce.Reason
		}
		if c.frames.exceeded() { // the library closed for a message over MaxMessage
			code, reason = statusTooBig, "Message too big"
		} else if code == -1 {
			code = ws.StatusAbnormalClosure
		}
	}
	c.g.invokeDisconnect(c, int64(code), reason)
}

// end closes the connection from API Gateway's side with code and reason (once).
func (c *conn) end(code ws.StatusCode, reason string) {
	c.mu.Lock()
	first := c.endCode == 0
	if first {
		c.endCode, c.endReason = code, reason
	}
	c.mu.Unlock()
	if first {
		go func() { _ = c.ws.Close(code, reason) }()
	}
}

// watch ends the connection at the idle timeout or the connection duration.
func (c *conn) watch() {
	idle := time.NewTimer(c.g.idleTimeout())
	defer idle.Stop()
	life := time.NewTimer(c.g.maxDuration() - time.Since(c.connectedAt))
	defer life.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-c.activity:
			idle.Reset(c.g.idleTimeout())
		case <-idle.C:
			c.end(statusGoingAway, "Going away")
			return
		case <-life.C:
			c.end(statusGoingAway, "Going away")
			return
		}
	}
}

// touch records a data message either way.
func (c *conn) touch() {
	c.mu.Lock()
	c.lastActive = time.Now()
	c.mu.Unlock()
	select {
	case c.activity <- struct{}{}:
	default:
	}
}

// post sends data as one message (text when it is UTF-8, else binary) in frames of at most
// MaxFrame bytes, as API Gateway splits a larger message.
func (c *conn) post(ctx context.Context, data []byte) error {
	size := len(data)
	typ := ws.MessageText
	if !utf8.Valid(data) {
		typ = ws.MessageBinary
	}
	w, err := c.ws.Writer(ctx, typ)
	if err != nil {
		return err
	}
	for len(data) > 0 {
		n := min(len(data), MaxFrame)
		if _, err := w.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	if err := w.Close(); err != nil {
		return err
	}
	c.touch()
	c.g.meter(Usage{Messages: messages(size)})
	return nil
}
