package socketio

import (
	"encoding/json"
	"fmt"
)

// Handshake is the data of Engine.IO's open packet.
type Handshake struct {
	SID          string   `json:"sid"`
	Upgrades     []string `json:"upgrades"`
	PingInterval int64    `json:"pingInterval"`
	PingTimeout  int64    `json:"pingTimeout"`
	MaxPayload   int64    `json:"maxPayload"`
}

// OpenFrame is the Engine.IO open packet the server sends first.
func OpenFrame(h Handshake) string {
	if h.Upgrades == nil {
		h.Upgrades = []string{}
	}
	data, _ := json.Marshal(h) // a struct of strings and numbers always encodes
	return string(EngineOpen) + string(data)
}

// ConnectFrame accepts a Socket.IO CONNECT: the socket's id.
func ConnectFrame(sid string) string {
	data, _ := json.Marshal(map[string]string{"sid": sid})
	return Packet{Type: Connect, ID: -1, Data: data}.Frame()
}

// ConnectErrorFrame refuses a Socket.IO CONNECT: the client's connect_error gets an Error whose
// message is message and whose data is data (omitted when nil).
func ConnectErrorFrame(namespace, message string, data any) string {
	v := map[string]any{"message": message}
	if data != nil {
		v["data"] = data
	}
	raw, _ := marshal(v)
	return Packet{Type: ConnectError, Namespace: namespace, ID: -1, Data: raw}.Frame()
}

// DisconnectFrame tells the client the server disconnected its socket (the client does not
// reconnect on its own after it: "io server disconnect").
func DisconnectFrame() string { return Packet{Type: Disconnect, ID: -1}.Frame() }

// EventFrame is an event with its arguments.
func EventFrame(name string, args ...any) (string, error) {
	data, err := marshal(append([]any{name}, args...))
	if err != nil {
		return "", fmt.Errorf("socketio: event %s: %w", name, err)
	}
	return Packet{Type: Event, ID: -1, Data: data}.Frame(), nil
}

// AckFrame answers the acknowledgement id with the arguments.
func AckFrame(id int64, args ...any) (string, error) {
	if args == nil {
		args = []any{}
	}
	data, err := marshal(args)
	if err != nil {
		return "", fmt.Errorf("socketio: acknowledgement %d: %w", id, err)
	}
	return Packet{Type: Ack, ID: id, Data: data}.Frame(), nil
}

// marshal encodes JSON without escaping <, > and & (log lines are shown as text).
func marshal(v any) (json.RawMessage, error) {
	var b jsonBuffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(b.trimmed()), nil
}

type jsonBuffer struct{ b []byte }

func (j *jsonBuffer) Write(p []byte) (int, error) { j.b = append(j.b, p...); return len(p), nil }

func (j *jsonBuffer) trimmed() []byte {
	if n := len(j.b); n > 0 && j.b[n-1] == '\n' {
		return j.b[:n-1]
	}
	return j.b
}
