package liveclient

import (
	"errors"
	"fmt"

	"github.com/kilnbuild/kiln/shared/api"
)

// Line is a build:log event: one line of a build's log.
type Line = api.LiveLogLine

// Status is a build:status event: a build's status, sent at join and at every change.
type Status = api.LiveBuildStatus

// Event is what the client delivers, in the order the server sent it: exactly one field is set.
type Event struct {
	Log    *Line
	Status *Status
	// Refused is a join the server refused after it was accepted once: a join sent again after
	// a reconnect (the build is gone, the role changed), or build:error.
	Refused *RefusedError
}

// ConnectError is the server's refusal of the Socket.IO CONNECT: a missing, wrong or revoked
// token, or the organization's connection limit. Message is the server's, which starts with the
// code (e.g. "invalid_token: ...").
type ConnectError struct {
	Code    string
	Message string
}

func (e *ConnectError) Error() string { return "live events: connect refused: " + e.Message }

// RefusedError is the server's refusal of a join: Code is one of the API's error codes
// (not_found for a build of another organization or none).
type RefusedError struct {
	BuildID string
	Code    string
	Message string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("live events: join %s refused: %s (%s)", e.BuildID, e.Message, e.Code)
}

// HandshakeError is an answer to the WebSocket upgrade that is not one: a server without live
// events answers 404 at /socket.io/, for instance.
type HandshakeError struct {
	StatusCode int
	Err        error
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("live events: the server answered HTTP %d to the WebSocket upgrade: %v", e.StatusCode, e.Err)
}

func (e *HandshakeError) Unwrap() error { return e.Err }

// Errors of a client that ended.
var (
	// ErrClosed: Close was called.
	ErrClosed = errors.New("live events: the client is closed")
	// ErrServerDisconnect: the server disconnected the socket (a revoked token, a removed
	// member); the client does not reconnect after it, as the stock client does not.
	ErrServerDisconnect = errors.New("live events: the server disconnected the socket")
)
