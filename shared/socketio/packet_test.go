package socketio

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParsePacket(t *testing.T) {
	tests := []struct {
		name, in string
		want     Packet
		wantErr  bool
	}{
		{"connect with auth", `0{"token":"kiln_x"}`, Packet{Type: Connect, Namespace: "/", ID: -1, Data: json.RawMessage(`{"token":"kiln_x"}`)}, false},
		{"connect without data", `0`, Packet{Type: Connect, Namespace: "/", ID: -1}, false},
		{"connect to a namespace", `0/admin,{"token":"a"}`, Packet{Type: Connect, Namespace: "/admin", ID: -1, Data: json.RawMessage(`{"token":"a"}`)}, false},
		{"namespace without data", `0/admin`, Packet{Type: Connect, Namespace: "/admin", ID: -1}, false},
		{"event", `2["join:build",{"buildId":"b"}]`, Packet{Type: Event, Namespace: "/", ID: -1, Data: json.RawMessage(`["join:build",{"buildId":"b"}]`)}, false},
		{"event with ack", `213["join:build",{"buildId":"b"}]`, Packet{Type: Event, Namespace: "/", ID: 13, Data: json.RawMessage(`["join:build",{"buildId":"b"}]`)}, false},
		{"disconnect", `1`, Packet{Type: Disconnect, Namespace: "/", ID: -1}, false},
		{"not JSON", `2[oops`, Packet{}, true},
		{"unknown type", `9`, Packet{}, true},
		{"empty", ``, Packet{}, true},
		{"binary", `51-["x",{"_placeholder":true,"num":0}]`, Packet{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePacket(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParsePacket(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got.Type != tt.want.Type || got.Namespace != tt.want.Namespace || got.ID != tt.want.ID || string(got.Data) != string(tt.want.Data) {
				t.Fatalf("ParsePacket(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
	if _, err := ParsePacket(`51-["x"]`); !errors.Is(err, ErrBinary) {
		t.Fatalf("binary packet error = %v, want ErrBinary", err)
	}
}

func TestFramesRoundTrip(t *testing.T) {
	ev, err := EventFrame("build:log", map[string]any{"seq": 3, "message": "<a> & b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `42["build:log",{"message":"<a> & b","seq":3}]`; ev != want {
		t.Fatalf("EventFrame = %s, want %s", ev, want)
	}
	ack, _ := AckFrame(7, map[string]bool{"ok": true})
	if want := `437[{"ok":true}]`; ack != want {
		t.Fatalf("AckFrame = %s, want %s", ack, want)
	}
	if got, want := ConnectErrorFrame("/", "no", nil), `44{"message":"no"}`; got != want {
		t.Fatalf("ConnectErrorFrame = %s, want %s", got, want)
	}
	if got, want := ConnectErrorFrame("/x", "Invalid namespace", nil), `44/x,{"message":"Invalid namespace"}`; got != want {
		t.Fatalf("ConnectErrorFrame = %s, want %s", got, want)
	}
	if got, want := OpenFrame(Handshake{SID: "s", PingInterval: 25000, PingTimeout: 20000, MaxPayload: 1e6}),
		`0{"sid":"s","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}`; got != want {
		t.Fatalf("OpenFrame = %s, want %s", got, want)
	}
	typ, rest, err := SplitFrame(ev)
	if err != nil || typ != EngineMessage {
		t.Fatalf("SplitFrame = %c, %v", typ, err)
	}
	p, err := ParsePacket(rest)
	if err != nil {
		t.Fatal(err)
	}
	name, args, err := p.EventName()
	if err != nil || name != "build:log" || len(args) != 1 {
		t.Fatalf("EventName = %q, %d args, %v", name, len(args), err)
	}
}
