// Package live pushes build statuses and log lines to the sockets that watch them, in the
// protocol the stock socket.io-client v4 speaks (package socketio): a client connects with a
// token, joins a build's room, and gets build:status at join and at every change and build:log
// for every line, in seq order, from where it asked (fromSeq) on.
//
// The same Service runs on one machine (kiln serve: sockets held by this process, rooms in
// memory) and in AWS (an API Gateway WebSocket API: every frame is a Lambda invocation, rooms
// are DynamoDB items, frames go out through the @connections API). Nothing is held between two
// calls but what the Registry keeps, so any process may send to any socket.
package live

import (
	"context"
	"errors"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Conn is what kiln keeps of a socket.
type Conn struct {
	ID string
	// OpenedAt is when the socket opened; it is kept a day at most (Expires).
	OpenedAt time.Time
	Expires  time.Time
	// The fields below are set once the Socket.IO CONNECT was accepted (OrgID != "").
	OrgID  string
	UserID string
	Role   kiln.Role
	// CredentialHash is the SHA-256 of the token or session the socket connected with, to check
	// it again; Session says which of the two it was.
	CredentialHash string
	Session        bool
	// SocketID is the Socket.IO id given at CONNECT.
	SocketID string
}

// Connected says whether the socket's CONNECT was accepted.
func (c *Conn) Connected() bool { return c.OrgID != "" }

// Cursor is how far a socket in a build's room has been sent: the last line's seq and the last
// status.
type Cursor struct {
	Seq    int64
	Status kiln.BuildStatus
}

// Lease is a sender's hold on a membership: its token and the cursor it sends from.
type Lease struct {
	Token string
	Cursor
	// Until is when a holder that sends again after a dirty Release lets the lease go at the
	// latest: such a Release extends the lease to it (zero: it keeps its time), so a holder kept
	// busy by a chatty build does not lose it while it sends.
	Until time.Time
}

// Room names a build's room.
type Room struct {
	OrgID, BuildID string
}

// Registry keeps sockets and rooms. Every implementation passes livetest.RunRegistry.
//
// Sending to a socket in a room is guarded by a lease on its membership, so that one sender at a
// time sends that socket's lines of that build, in order: Acquire takes the lease (false if
// another sender holds it), MarkDirty tells the holder that there is more to send, and Release
// gives it back with the new cursor unless it was marked dirty meanwhile (false: the holder
// keeps the lease, the mark is cleared, and it sends again).
type Registry interface {
	PutConn(ctx context.Context, c *Conn) error
	// GetConn returns ErrNoConn for a socket it does not know.
	GetConn(ctx context.Context, id string) (*Conn, error)
	// Admit records the accepted CONNECT of c (its organization fields set), unless the
	// organization has limit connected sockets already (ErrTooManyConns). limit 0 is no limit.
	Admit(ctx context.Context, c *Conn, limit int) error
	// DeleteConn forgets a socket and its rooms.
	DeleteConn(ctx context.Context, id string) error
	// OrganizationConns lists the connected sockets of an organization.
	OrganizationConns(ctx context.Context, orgID string) ([]*Conn, error)
	// AllConns lists every socket (to ping them where no process holds them).
	AllConns(ctx context.Context) ([]*Conn, error)

	// Join puts the socket in the room with the cursor (a socket already in it gets the new
	// cursor), unless it is in maxRooms rooms already (ErrTooManyRooms).
	Join(ctx context.Context, connID string, r Room, c Cursor, maxRooms int) error
	Leave(ctx context.Context, connID string, r Room) error
	// Members lists the sockets in a room.
	Members(ctx context.Context, r Room) ([]string, error)

	// Acquire takes the lease on the socket's membership of the room until the time given (a
	// lease past its time is free) and returns it with the cursor. ok is false when another
	// sender holds it; ErrNotMember when the socket is not in the room.
	Acquire(ctx context.Context, connID string, r Room, until time.Time) (l Lease, ok bool, err error)
	MarkDirty(ctx context.Context, connID string, r Room) error
	// Release stores the lease's cursor and gives the lease back, unless the membership was
	// marked dirty since it was taken: then the mark is cleared, the lease kept, and released is
	// false (the holder sends again). A lease that is no longer the membership's (the socket
	// left, or joined again) is released without storing anything.
	Release(ctx context.Context, connID string, r Room, l Lease) (released bool, err error)
}

// Registry errors.
var (
	ErrNoConn       = errors.New("live: no such socket")
	ErrNotMember    = errors.New("live: the socket is not in the room")
	ErrTooManyConns = errors.New("live: the organization has its most sockets connected")
	ErrTooManyRooms = errors.New("live: the socket is in its most rooms")
)

// Sender sends frames to sockets and closes them.
type Sender interface {
	// Send sends each frame as one WebSocket text message, in order. ErrGone: the socket is
	// closed.
	Send(ctx context.Context, connID string, frames ...string) error
	Close(ctx context.Context, connID string) error
}

// ErrGone is a Sender's answer for a socket that is closed.
var ErrGone = errors.New("live: the socket is gone")
