package live

import (
	"context"
	"sync"
	"time"
)

// Memory is the Registry of one process (kiln serve).
type Memory struct {
	mu    sync.Mutex
	conns map[string]*Conn
	rooms map[Room]map[string]*membership
	// of lists the rooms of each socket.
	of map[string]map[Room]struct{}
}

type membership struct {
	cursor Cursor
	token  string // the lease's holder, "" for none
	until  time.Time
	dirty  bool
}

var _ Registry = (*Memory)(nil)

// NewMemory returns an empty registry.
func NewMemory() *Memory {
	return &Memory{conns: map[string]*Conn{}, rooms: map[Room]map[string]*membership{}, of: map[string]map[Room]struct{}{}}
}

func (m *Memory) PutConn(_ context.Context, c *Conn) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cp := *c
	m.conns[c.ID] = &cp
	return nil
}

func (m *Memory) GetConn(_ context.Context, id string) (*Conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.conns[id]
	if !ok {
		return nil, ErrNoConn
	}
	cp := *c
	return &cp, nil
}

func (m *Memory) Admit(_ context.Context, c *Conn, limit int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.conns[c.ID]; !ok {
		return ErrNoConn
	}
	if limit > 0 {
		n := 0
		for _, o := range m.conns {
			if o.OrgID == c.OrgID && o.ID != c.ID {
				n++
			}
		}
		if n >= limit {
			return ErrTooManyConns
		}
	}
	cp := *c
	m.conns[c.ID] = &cp
	return nil
}

func (m *Memory) DeleteConn(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.conns, id)
	for r := range m.of[id] {
		delete(m.rooms[r], id)
		if len(m.rooms[r]) == 0 {
			delete(m.rooms, r)
		}
	}
	delete(m.of, id)
	return nil
}

func (m *Memory) OrganizationConns(_ context.Context, orgID string) ([]*Conn, error) {
	return m.list(func(c *Conn) bool { return c.OrgID == orgID }), nil
}

func (m *Memory) AllConns(context.Context) ([]*Conn, error) {
	return m.list(func(*Conn) bool { return true }), nil
}

func (m *Memory) list(keep func(*Conn) bool) []*Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Conn
	for _, c := range m.conns {
		if keep(c) {
			cp := *c
			out = append(out, &cp)
		}
	}
	return out
}

func (m *Memory) Join(_ context.Context, connID string, r Room, c Cursor, maxRooms int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.conns[connID]; !ok {
		return ErrNoConn
	}
	if _, ok := m.rooms[r][connID]; ok {
		m.rooms[r][connID] = &membership{cursor: c} // a new membership: the old lease is void
		return nil
	}
	if maxRooms > 0 && len(m.of[connID]) >= maxRooms {
		return ErrTooManyRooms
	}
	if m.rooms[r] == nil {
		m.rooms[r] = map[string]*membership{}
	}
	m.rooms[r][connID] = &membership{cursor: c}
	if m.of[connID] == nil {
		m.of[connID] = map[Room]struct{}{}
	}
	m.of[connID][r] = struct{}{}
	return nil
}

func (m *Memory) Leave(_ context.Context, connID string, r Room) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.rooms[r], connID)
	if len(m.rooms[r]) == 0 {
		delete(m.rooms, r)
	}
	delete(m.of[connID], r)
	return nil
}

func (m *Memory) Members(_ context.Context, r Room) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.rooms[r]))
	for id := range m.rooms[r] {
		out = append(out, id)
	}
	return out, nil
}

func (m *Memory) Acquire(_ context.Context, connID string, r Room, until time.Time) (Lease, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mb, ok := m.rooms[r][connID]
	if !ok {
		return Lease{}, false, ErrNotMember
	}
	if mb.token != "" && time.Now().Before(mb.until) {
		return Lease{}, false, nil
	}
	mb.token, mb.until, mb.dirty = newToken(), until, false
	return Lease{Token: mb.token, Cursor: mb.cursor}, true, nil
}

func (m *Memory) MarkDirty(_ context.Context, connID string, r Room) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mb, ok := m.rooms[r][connID]; ok {
		mb.dirty = true
	}
	return nil
}

func (m *Memory) Release(_ context.Context, connID string, r Room, l Lease) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mb, ok := m.rooms[r][connID]
	// A free membership's token is "": a lease without a token is never its lease.
	if !ok || l.Token == "" || mb.token != l.Token {
		return true, nil
	}
	mb.cursor = l.Cursor
	if mb.dirty {
		mb.dirty = false
		if !l.Until.IsZero() {
			mb.until = l.Until
		}
		return false, nil
	}
	mb.token = ""
	return true, nil
}
