package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/socketio"
)

// HandshakeError checks the query of a socket's opening request as an Engine.IO 4 server does:
// EIO=4 and the websocket transport. It returns the Engine.IO error code and message to answer
// with (HTTP 400, {"code", "message"}), or ok.
func HandshakeError(q url.Values) (code int, message string, ok bool) {
	switch {
	case q.Get("EIO") != "4":
		return 5, "Unsupported protocol version", false
	case q.Get("transport") != "websocket":
		return 0, "Transport unknown", false
	}
	return 0, "", true
}

// Open records a socket that just opened.
func (s *Service) Open(ctx context.Context, connID string) error {
	now := s.now()
	c := &Conn{ID: connID, OpenedAt: now, Expires: now.Add(connLifetime)}
	if err := s.Registry.PutConn(ctx, c); err != nil {
		return fmt.Errorf("live: open %s: %w", connID, err)
	}
	return nil
}

// Greet sends a socket Engine.IO's open packet (the first thing a client waits for).
func (s *Service) Greet(ctx context.Context, connID string) error {
	return s.Sender.Send(ctx, connID, socketio.OpenFrame(socketio.Handshake{
		SID:          connID,
		PingInterval: s.Pings.Interval.Milliseconds(),
		PingTimeout:  s.Pings.Timeout.Milliseconds(),
		MaxPayload:   s.MaxPayload,
	}))
}

// Closed forgets a socket that closed.
func (s *Service) Closed(ctx context.Context, connID string) error {
	if err := s.Registry.DeleteConn(ctx, connID); err != nil {
		return fmt.Errorf("live: forget %s: %w", connID, err)
	}
	return nil
}

// Receive handles one message from a socket.
func (s *Service) Receive(ctx context.Context, connID, frame string) error {
	typ, rest, err := socketio.SplitFrame(frame)
	if err != nil {
		return s.hangUp(ctx, connID, err.Error())
	}
	switch typ {
	case socketio.EnginePong, socketio.EngineNoop:
		return nil
	case socketio.EnginePing:
		return s.send(ctx, connID, string(socketio.EnginePong)+rest)
	case socketio.EngineClose:
		return s.Closed(ctx, connID)
	case socketio.EngineMessage:
	default:
		return s.hangUp(ctx, connID, fmt.Sprintf("unexpected Engine.IO packet type %c", typ))
	}
	p, err := socketio.ParsePacket(rest)
	if err != nil {
		return s.hangUp(ctx, connID, err.Error())
	}
	c, err := s.Registry.GetConn(ctx, connID)
	if errors.Is(err, ErrNoConn) {
		return s.hangUp(ctx, connID, "unknown socket")
	}
	if err != nil {
		return fmt.Errorf("live: %s: %w", connID, err)
	}
	switch {
	case p.Type == socketio.Connect:
		return s.connect(ctx, c, p)
	case p.Namespace != socketio.DefaultNamespace || !c.Connected():
		return nil // a packet for a namespace it is not connected to: ignored, as Socket.IO does
	case p.Type == socketio.Disconnect:
		// The socket leaves the namespace and its rooms; the connection stays open.
		if err := s.Registry.DeleteConn(ctx, c.ID); err != nil {
			return fmt.Errorf("live: disconnect %s: %w", c.ID, err)
		}
		return s.Registry.PutConn(ctx, &Conn{ID: c.ID, OpenedAt: c.OpenedAt, Expires: c.Expires})
	case p.Type == socketio.Event:
		return s.event(ctx, c, p)
	}
	return nil
}

// connect answers a Socket.IO CONNECT: its auth payload {token} decides.
func (s *Service) connect(ctx context.Context, c *Conn, p socketio.Packet) error {
	if p.Namespace != socketio.DefaultNamespace {
		return s.send(ctx, c.ID, socketio.ConnectErrorFrame(p.Namespace, "Invalid namespace", nil))
	}
	if c.Connected() {
		return s.send(ctx, c.ID, socketio.ConnectFrame(c.SocketID))
	}
	var a struct {
		Token string `json:"token"`
	}
	if len(p.Data) > 0 {
		if err := json.Unmarshal(p.Data, &a); err != nil {
			return s.refuseConnect(ctx, c, kiln.EBadRequest, "auth must be an object: {token: <API token or console session>}")
		}
	}
	if a.Token == "" {
		return s.refuseConnect(ctx, c, kiln.EInvalidToken, "no token: connect with auth: {token: <API token or console session>}")
	}
	pr, err := s.Auth.Resolve(ctx, a.Token)
	if err != nil {
		return s.refuseConnectErr(ctx, c, err)
	}
	if pr.Organization == nil {
		return s.refuseConnectErr(ctx, c, auth.ErrNoOrganization())
	}
	if err := pr.Require(kiln.ActRead); err != nil {
		return s.refuseConnectErr(ctx, c, err)
	}
	c.OrgID, c.UserID, c.Role = pr.Organization.ID, pr.Member.User.ID, pr.Member.Role
	c.CredentialHash, c.Session = auth.HashToken(a.Token), pr.Session != nil
	c.SocketID = newToken()
	limit, plan, err := s.limit(ctx, c.OrgID)
	if err != nil {
		return err
	}
	switch err := s.Registry.Admit(ctx, c, limit); {
	case errors.Is(err, ErrTooManyConns):
		return s.refuseConnect(ctx, &Conn{ID: c.ID}, kiln.EPlanLimitReached, fmt.Sprintf(
			"the organization has %d live connections open, the most its %s plan allows at once: close one, or ask for a higher limit", limit, plan))
	case err != nil:
		return fmt.Errorf("live: admit %s: %w", c.ID, err)
	}
	return s.send(ctx, c.ID, socketio.ConnectFrame(c.SocketID))
}

func (s *Service) limit(ctx context.Context, orgID string) (int, kiln.Plan, error) {
	if s.Limit == nil {
		return 0, "", nil
	}
	n, plan, err := s.Limit(ctx, orgID)
	if err != nil {
		return 0, "", fmt.Errorf("live: the organization's socket limit: %w", err)
	}
	return n, plan, nil
}

func (s *Service) refuseConnectErr(ctx context.Context, c *Conn, err error) error {
	var ke *kiln.Error
	if !errors.As(err, &ke) {
		return fmt.Errorf("live: connect %s: %w", c.ID, err)
	}
	return s.refuseConnect(ctx, c, ke.Code, ke.Message)
}

// refuseConnect answers a CONNECT with an error whose message starts with its code (the stock
// client's connect_error shows the message) and whose data is {error, message}.
func (s *Service) refuseConnect(ctx context.Context, c *Conn, code, message string) error {
	s.log().InfoContext(ctx, "live: connect refused", slog.String("socket", c.ID), slog.String("error", code))
	return s.send(ctx, c.ID, socketio.ConnectErrorFrame(socketio.DefaultNamespace, code+": "+message,
		map[string]string{"error": code, "message": message}))
}

// send sends frames to a socket; a socket that is gone is forgotten.
func (s *Service) send(ctx context.Context, connID string, frames ...string) error {
	err := s.Sender.Send(ctx, connID, frames...)
	if errors.Is(err, ErrGone) {
		return s.Closed(ctx, connID)
	}
	if err != nil {
		return fmt.Errorf("live: send to %s: %w", connID, err)
	}
	return nil
}

// hangUp closes a socket that broke the protocol.
func (s *Service) hangUp(ctx context.Context, connID, why string) error {
	s.log().InfoContext(ctx, "live: closing a socket that broke the protocol", slog.String("socket", connID), slog.String("why", why))
	if err := s.Sender.Close(ctx, connID); err != nil && !errors.Is(err, ErrGone) {
		s.log().WarnContext(ctx, "live: close", slog.String("socket", connID), slog.String("error", err.Error()))
	}
	return s.Closed(ctx, connID)
}
