// Package livesocket holds the sockets of live build events in this process (kiln serve): it
// answers the WebSocket upgrade at /socket.io/, reads each socket's messages into live.Service,
// writes what the service sends, and pings every socket as Engine.IO 4 asks. It is live's Sender
// on one machine (in AWS, API Gateway holds the sockets and the @connections API sends).
package livesocket

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/kilnbuild/kiln/shared/live"
	"github.com/kilnbuild/kiln/shared/socketio"
)

// Defaults of one machine's sockets.
const (
	PingInterval = 25 * time.Second
	PingTimeout  = 20 * time.Second
	// MaxPayload is the largest message read from a client.
	MaxPayload = 128 << 10
	// queueLength is how many frames wait for a socket's writer before a sender waits.
	queueLength = 256
	// sendWait is how long a sender waits for room in a socket's queue before the socket is
	// closed as too slow (its client reconnects and joins again from the last seq it had).
	sendWait = 5 * time.Second
	// writeWait bounds one write to the network.
	writeWait = 10 * time.Second
)

// Server holds this process's sockets.
type Server struct {
	// Live gets every message; its Sender must be this Server.
	Live   *live.Service
	Pings  live.Pings
	Logger *slog.Logger

	mu     sync.Mutex
	conns  map[string]*socket
	closed bool
	nextID atomic.Int64
	prefix string
	start  sync.Once
	stop   chan struct{}
}

// socket is one WebSocket and its writer's queue.
type socket struct {
	id    string
	ws    *websocket.Conn
	out   chan outgoing
	done  chan struct{}
	once  sync.Once
	pong  atomic.Int64 // unix nanoseconds of the last pong (or of the open)
	ping  atomic.Int64 // unix nanoseconds of the last ping not answered, 0 for none
	close sync.Once
}

type outgoing struct {
	frame string
	close bool
}

var _ live.Sender = (*Server)(nil)

// New returns a server for the service; it sets the service's Sender and pings.
func New(svc *live.Service, logger *slog.Logger) *Server {
	s := &Server{Live: svc, Pings: live.Pings{Interval: PingInterval, Timeout: PingTimeout}, Logger: logger,
		conns: map[string]*socket{}, prefix: newPrefix(), stop: make(chan struct{})}
	svc.Sender = s
	svc.Pings = s.Pings
	svc.MaxPayload = MaxPayload
	return s
}

func (s *Server) log() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// ServeHTTP answers GET /socket.io/?EIO=4&transport=websocket.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if code, msg, ok := live.HandshakeError(r.URL.Query()); !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg})
		return
	}
	// Any origin may connect: a socket is authorized by the token in its CONNECT packet, never by
	// a cookie, so a page of another origin gets nothing it could not get with the token.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered the request
	}
	ws.SetReadLimit(MaxPayload)
	s.start.Do(func() { go s.pingLoop() })
	sock := &socket{id: s.newID(), ws: ws, out: make(chan outgoing, queueLength), done: make(chan struct{})}
	sock.pong.Store(time.Now().UnixNano())
	if !s.add(sock) {
		_ = ws.Close(websocket.StatusGoingAway, "the server is shutting down")
		return
	}
	ctx := context.WithoutCancel(r.Context())
	defer s.forget(ctx, sock)
	go s.write(sock)
	if err := s.Live.Open(ctx, sock.id); err != nil {
		s.log().ErrorContext(ctx, "live socket: open", slog.String("error", err.Error()))
		return
	}
	if err := s.Live.Greet(ctx, sock.id); err != nil {
		return
	}
	s.read(ctx, sock)
}

// read hands every message to the service until the socket closes.
func (s *Server) read(ctx context.Context, sock *socket) {
	for {
		typ, data, err := sock.ws.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			_ = s.Live.Receive(ctx, sock.id, "") // binary: a protocol error
			return
		}
		msg := string(data)
		if msg == string(socketio.EnginePong) {
			sock.pong.Store(time.Now().UnixNano())
			sock.ping.Store(0)
		}
		if err := s.Live.Receive(ctx, sock.id, msg); err != nil {
			s.log().WarnContext(ctx, "live socket: message", slog.String("socket", sock.id), slog.String("error", err.Error()))
		}
	}
}

// write writes the socket's queue in order until it closes.
func (s *Server) write(sock *socket) {
	defer sock.ws.CloseNow()
	for {
		select {
		case <-sock.done:
			return
		case o := <-sock.out:
			if o.close {
				_ = sock.ws.Close(websocket.StatusNormalClosure, "")
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), writeWait)
			err := sock.ws.Write(ctx, websocket.MessageText, []byte(o.frame))
			cancel()
			if err != nil {
				return
			}
		}
	}
}

// Send queues frames for a socket's writer; a socket whose queue stays full for sendWait is
// closed as too slow.
func (s *Server) Send(ctx context.Context, connID string, frames ...string) error {
	sock := s.get(connID)
	if sock == nil {
		return live.ErrGone
	}
	for _, f := range frames {
		if err := sock.enqueue(ctx, outgoing{frame: f}); err != nil {
			return err
		}
	}
	return nil
}

func (sock *socket) enqueue(ctx context.Context, o outgoing) error {
	select {
	case sock.out <- o:
		return nil
	case <-sock.done:
		return live.ErrGone
	default:
	}
	t := time.NewTimer(sendWait)
	defer t.Stop()
	select {
	case sock.out <- o:
		return nil
	case <-sock.done:
		return live.ErrGone
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		sock.end()
		return live.ErrGone
	}
}

// Close closes a socket once the frames queued before are written.
func (s *Server) Close(ctx context.Context, connID string) error {
	sock := s.get(connID)
	if sock == nil {
		return live.ErrGone
	}
	return sock.enqueue(ctx, outgoing{close: true})
}

// end stops the socket's writer and closes it at once.
func (sock *socket) end() {
	sock.once.Do(func() { close(sock.done) })
}

// Shutdown closes every socket (the process is stopping); clients reconnect elsewhere.
func (s *Server) Shutdown() {
	s.mu.Lock()
	if !s.closed {
		close(s.stop)
	}
	s.closed = true
	socks := make([]*socket, 0, len(s.conns))
	for _, sock := range s.conns {
		socks = append(socks, sock)
	}
	s.mu.Unlock()
	for _, sock := range socks {
		_ = sock.ws.Close(websocket.StatusGoingAway, "the server is shutting down")
		sock.end()
	}
}

// Len is how many sockets are open.
func (s *Server) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Server) add(sock *socket) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[sock.id] = sock
	return true
}

func (s *Server) get(id string) *socket {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[id]
}

func (s *Server) forget(ctx context.Context, sock *socket) {
	s.mu.Lock()
	delete(s.conns, sock.id)
	s.mu.Unlock()
	sock.end()
	if err := s.Live.Closed(ctx, sock.id); err != nil && !errors.Is(err, context.Canceled) {
		s.log().WarnContext(ctx, "live socket: forget", slog.String("socket", sock.id), slog.String("error", err.Error()))
	}
}
