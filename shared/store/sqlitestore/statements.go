package sqlitestore

import (
	"context"
	"database/sql"
	"sync"
)

// statements caches prepared statements by their text, so that a query is parsed and planned once
// rather than on every call (parsing was a third of the time of a GET /builds).
type statements struct {
	mu    sync.Mutex
	cache map[string]*sql.Stmt
}

// maxStatements bounds the cache; queries are built from a fixed set of shapes, so it is never
// reached in practice.
const maxStatements = 512

func (s *Store) prepared(ctx context.Context, text string) (*sql.Stmt, error) {
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	if st, ok := s.stmts.cache[text]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	if s.stmts.cache == nil {
		s.stmts.cache = map[string]*sql.Stmt{}
	}
	if len(s.stmts.cache) < maxStatements {
		s.stmts.cache[text] = st
	}
	return st, nil
}

// queryContext runs a read query through the statement cache.
func (s *Store) queryContext(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	st, err := s.prepared(ctx, text)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// queryRowContext runs a one-row read query through the statement cache.
func (s *Store) queryRowContext(ctx context.Context, text string, args ...any) *sql.Row {
	st, err := s.prepared(ctx, text)
	if err != nil {
		return s.db.QueryRowContext(ctx, text, args...) // reports the same error through Scan
	}
	return st.QueryRowContext(ctx, args...)
}

func (s *statements) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.cache {
		st.Close()
	}
	s.cache = nil
}
