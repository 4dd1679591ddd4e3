package liveclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/kilnbuild/kiln/shared/socketio"
)

// conn is one WebSocket, from its Engine.IO open packet and accepted CONNECT to its end.
type conn struct {
	ws *websocket.Conn
	hs socketio.Handshake

	mu      sync.Mutex
	nextAck int64
	acks    map[int64]chan ackAnswer
	ended   bool
}

// ackAnswer is an acknowledgement's arguments, or why none will come.
type ackAnswer struct {
	args []json.RawMessage
	err  error
}

// maxMessage is the largest message read from the server (a replay's lines come one per
// message, each cut to the API's line size).
const maxMessage = 1 << 20

// open dials the socket and goes through Engine.IO's open and Socket.IO's CONNECT with the
// token. It answers the server's pings meanwhile.
func open(ctx context.Context, wsURL, token string, hc *http.Client) (*conn, error) {
	ws, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, &HandshakeError{StatusCode: resp.StatusCode, Err: err}
		}
		return nil, fmt.Errorf("live events: dial %s: %w", wsURL, err)
	}
	ws.SetReadLimit(maxMessage)
	c := &conn{ws: ws, acks: map[int64]chan ackAnswer{}}
	if err := c.handshake(ctx, token); err != nil {
		ws.CloseNow()
		return nil, err
	}
	return c, nil
}

func (c *conn) handshake(ctx context.Context, token string) error {
	// The open packet comes first; a noop before it is let by (in AWS the open packet is posted
	// by a Lambda right after the connection, not written by the upgrade).
	var typ socketio.EngineType
	var rest string
	var err error
	for typ != socketio.EngineOpen {
		if typ, rest, err = c.read(ctx); err != nil {
			return fmt.Errorf("live events: waiting for the open packet: %w", err)
		}
		if typ != socketio.EngineOpen && typ != socketio.EngineNoop {
			return fmt.Errorf("live events: the server's first packet is of type %c, not open", typ)
		}
	}
	if err := json.Unmarshal([]byte(rest), &c.hs); err != nil {
		return fmt.Errorf("live events: the open packet: %w", err)
	}
	auth, err := json.Marshal(map[string]string{"token": token})
	if err != nil {
		return fmt.Errorf("live events: connect: %w", err)
	}
	if err := c.write(ctx, socketio.Packet{Type: socketio.Connect, ID: -1, Data: auth}.Frame()); err != nil {
		return fmt.Errorf("live events: connect: %w", err)
	}
	for {
		typ, rest, err := c.read(ctx)
		if err != nil {
			return fmt.Errorf("live events: waiting for the answer to connect: %w", err)
		}
		switch typ {
		case socketio.EnginePing:
			if err := c.write(ctx, string(socketio.EnginePong)+rest); err != nil {
				return fmt.Errorf("live events: pong: %w", err)
			}
			continue
		case socketio.EngineMessage:
		default:
			continue
		}
		p, err := socketio.ParsePacket(rest)
		if err != nil {
			return fmt.Errorf("live events: the answer to connect: %w", err)
		}
		switch p.Type {
		case socketio.Connect:
			return nil
		case socketio.ConnectError:
			var e struct {
				Message string `json:"message"`
				Data    struct {
					Error string `json:"error"`
				} `json:"data"`
			}
			_ = json.Unmarshal(p.Data, &e)
			return &ConnectError{Code: e.Data.Error, Message: e.Message}
		}
	}
}

// silence is how long the socket may hear nothing before it is taken for dead: the server
// pings every interval and waits timeout for the pong, so a live one is heard from within both.
func (c *conn) silence() time.Duration {
	d := time.Duration(c.hs.PingInterval+c.hs.PingTimeout) * time.Millisecond
	if d <= 0 {
		d = 45 * time.Second
	}
	return d
}

// read reads one Engine.IO packet.
func (c *conn) read(ctx context.Context) (socketio.EngineType, string, error) {
	typ, data, err := c.ws.Read(ctx)
	if err != nil {
		return 0, "", err
	}
	if typ != websocket.MessageText {
		return 0, "", socketio.ErrBinary
	}
	return socketio.SplitFrame(string(data))
}

// writeWait bounds one write.
const writeWait = 10 * time.Second

func (c *conn) write(ctx context.Context, frame string) error {
	ctx, cancel := context.WithTimeout(ctx, writeWait)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, []byte(frame))
}

// emit sends an event and waits for its acknowledgement's arguments.
func (c *conn) emit(ctx context.Context, name string, arg any) ([]json.RawMessage, error) {
	data, err := json.Marshal([]any{name, arg})
	if err != nil {
		return nil, fmt.Errorf("live events: %s: %w", name, err)
	}
	answer := make(chan ackAnswer, 1)
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return nil, errConnLost
	}
	id := c.nextAck
	c.nextAck++
	c.acks[id] = answer
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.acks, id)
		c.mu.Unlock()
	}()
	if err := c.write(ctx, socketio.Packet{Type: socketio.Event, ID: id, Data: data}.Frame()); err != nil {
		return nil, fmt.Errorf("live events: %s: %w", name, err)
	}
	select {
	case a := <-answer:
		if a.err != nil {
			return nil, fmt.Errorf("live events: %s: %w", name, a.err)
		}
		return a.args, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("live events: %s: %w", name, ctx.Err())
	}
}

// errConnLost answers the acknowledgements a connection that ended still owed.
var errConnLost = errors.New("the connection was lost before the server answered")

// acked hands an acknowledgement to whoever waits for it.
func (c *conn) acked(id int64, data json.RawMessage) {
	var args []json.RawMessage
	err := json.Unmarshal(data, &args)
	c.mu.Lock()
	answer := c.acks[id]
	c.mu.Unlock()
	if answer == nil {
		return
	}
	if err != nil {
		answer <- ackAnswer{err: fmt.Errorf("acknowledgement %d: %w", id, err)}
		return
	}
	answer <- ackAnswer{args: args}
}

// end closes the socket (politely when polite: a Socket.IO disconnect, then a normal close) and
// fails the acknowledgements still owed.
func (c *conn) end(polite bool) {
	c.mu.Lock()
	already := c.ended
	c.ended = true
	owed := c.acks
	c.acks = map[int64]chan ackAnswer{}
	c.mu.Unlock()
	for _, a := range owed {
		a <- ackAnswer{err: errConnLost}
	}
	if already {
		return
	}
	if polite {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = c.write(ctx, socketio.DisconnectFrame())
		cancel()
		_ = c.ws.Close(websocket.StatusNormalClosure, "")
		return
	}
	_ = c.ws.CloseNow()
}
