// Package socketio encodes and decodes the text packets of Socket.IO 4 carried by Engine.IO 4,
// as the stock socket.io-client (v4) sends and expects them over the WebSocket transport: one
// Engine.IO packet per WebSocket message, a Socket.IO packet inside each Engine.IO "message".
// Binary packets (attachments) are not supported: kiln's events are JSON.
//
// Engine.IO 4: https://socket.io/docs/v4/engine-io-protocol/
// Socket.IO 5 (the protocol of Socket.IO 4): https://socket.io/docs/v4/socket-io-protocol/
package socketio

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// EngineType is the type of an Engine.IO packet: its first character.
type EngineType byte

// Engine.IO 4 packet types.
const (
	EngineOpen    EngineType = '0'
	EngineClose   EngineType = '1'
	EnginePing    EngineType = '2'
	EnginePong    EngineType = '3'
	EngineMessage EngineType = '4'
	EngineUpgrade EngineType = '5'
	EngineNoop    EngineType = '6'
)

// Frames the server sends that carry no data.
const (
	PingFrame  = string(EnginePing)
	CloseFrame = string(EngineClose)
)

// PacketType is the type of a Socket.IO packet.
type PacketType byte

// Socket.IO packet types.
const (
	Connect      PacketType = 0
	Disconnect   PacketType = 1
	Event        PacketType = 2
	Ack          PacketType = 3
	ConnectError PacketType = 4
	BinaryEvent  PacketType = 5
	BinaryAck    PacketType = 6
)

// DefaultNamespace is the main namespace, the only one kiln serves.
const DefaultNamespace = "/"

// Packet is one Socket.IO packet.
type Packet struct {
	Type      PacketType
	Namespace string
	// ID is the acknowledgement id, or -1 for none.
	ID   int64
	Data json.RawMessage
}

// ErrBinary is the answer to a binary packet: kiln's protocol has none.
var ErrBinary = errors.New("socketio: binary packets are not supported")

// SplitFrame returns the Engine.IO type of a WebSocket text message and what follows it.
func SplitFrame(frame string) (EngineType, string, error) {
	if frame == "" {
		return 0, "", errors.New("socketio: empty Engine.IO packet")
	}
	t := EngineType(frame[0])
	if t < EngineOpen || t > EngineNoop {
		return 0, "", fmt.Errorf("socketio: unknown Engine.IO packet type %q", frame[0])
	}
	return t, frame[1:], nil
}

// ParsePacket decodes the Socket.IO packet of an Engine.IO message.
func ParsePacket(s string) (Packet, error) {
	p := Packet{Namespace: DefaultNamespace, ID: -1}
	if s == "" || s[0] < '0' || s[0] > '6' {
		return p, errors.New("socketio: missing or unknown packet type")
	}
	p.Type = PacketType(s[0] - '0')
	if p.Type == BinaryEvent || p.Type == BinaryAck {
		return p, ErrBinary
	}
	rest := s[1:]
	if strings.HasPrefix(rest, "/") {
		end := strings.IndexByte(rest, ',')
		if end < 0 {
			p.Namespace, rest = rest, ""
		} else {
			p.Namespace, rest = rest[:end], rest[end+1:]
		}
	}
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits > 0 {
		id, err := strconv.ParseInt(rest[:digits], 10, 64)
		if err != nil {
			return p, fmt.Errorf("socketio: acknowledgement id: %w", err)
		}
		p.ID, rest = id, rest[digits:]
	}
	if rest != "" {
		if !json.Valid([]byte(rest)) {
			return p, errors.New("socketio: the packet's data is not JSON")
		}
		p.Data = json.RawMessage(rest)
	}
	return p, nil
}

// Frame encodes the packet as the WebSocket text message carrying it (an Engine.IO message).
func (p Packet) Frame() string {
	var b strings.Builder
	b.Grow(len(p.Data) + 16)
	b.WriteByte(byte(EngineMessage))
	b.WriteByte('0' + byte(p.Type))
	if p.Namespace != "" && p.Namespace != DefaultNamespace {
		b.WriteString(p.Namespace)
		b.WriteByte(',')
	}
	if p.ID >= 0 {
		b.WriteString(strconv.FormatInt(p.ID, 10))
	}
	b.Write(p.Data)
	return b.String()
}

// EventName splits an event packet's data into its name and arguments.
func (p Packet) EventName() (string, []json.RawMessage, error) {
	var args []json.RawMessage
	if err := json.Unmarshal(p.Data, &args); err != nil || len(args) == 0 {
		return "", nil, errors.New("socketio: an event's data must be an array starting with its name")
	}
	var name string
	if err := json.Unmarshal(args[0], &name); err != nil {
		return "", nil, errors.New("socketio: an event's name must be a string")
	}
	return name, args[1:], nil
}
