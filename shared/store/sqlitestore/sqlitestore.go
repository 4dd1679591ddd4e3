// Package sqlitestore keeps kiln's state in one SQLite file, for the one-machine service. Several
// processes (kiln serve and kiln admin) may open the same file at once: the database runs in WAL
// mode, every connection waits up to busyTimeout for a lock, and write transactions begin
// IMMEDIATE so that two writers queue instead of failing to upgrade a read lock.
package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

var _ store.Store = (*Store)(nil)

// maxConns bounds the connections to the database; WAL lets readers work side by side.
const maxConns = 16

// busyTimeout is how long a connection waits for another writer before giving up.
const busyTimeout = 10 * time.Second

// Store is a store.Store on SQLite.
type Store struct {
	db    *sql.DB
	stmts statements
}

// Open opens (creating it if needed) the database at path and brings its schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	// Keep connections open between requests: opening one re-runs the pragmas, and
	// database/sql's default keeps only two idle.
	db.SetMaxIdleConns(maxConns)
	db.SetMaxOpenConns(maxConns)
	s := &Store{db: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.stmts.close()
	return s.db.Close()
}

//go:embed migrations/*.sql
var migrations embed.FS

// migrate applies, in one transaction, the migrations numbered above the database's user_version.
// Migration files are named NNNN_what.sql; their number is the schema version they lead to.
func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("sqlitestore: list migrations: %w", err)
	}
	sort.Strings(names)
	return s.tx(ctx, func(tx *sql.Tx) error {
		var current int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
			return fmt.Errorf("sqlitestore: read schema version: %w", err)
		}
		for _, name := range names {
			base := strings.TrimPrefix(name, "migrations/")
			version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
			if err != nil {
				return fmt.Errorf("sqlitestore: migration %s is not numbered: %w", base, err)
			}
			if version <= current {
				continue
			}
			text, err := migrations.ReadFile(name)
			if err != nil {
				return fmt.Errorf("sqlitestore: read migration %s: %w", base, err)
			}
			if _, err := tx.ExecContext(ctx, string(text)); err != nil {
				return fmt.Errorf("sqlitestore: apply migration %s: %w", base, err)
			}
			// PRAGMA takes no parameters; version is a number we parsed.
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
				return fmt.Errorf("sqlitestore: set schema version %d: %w", version, err)
			}
			current = version
		}
		return nil
	})
}

// tx runs fn in a write transaction (BEGIN IMMEDIATE, from the DSN) and commits if fn succeeds.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitestore: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitestore: commit: %w", err)
	}
	return nil
}

// isConstraint reports whether err is a failed UNIQUE, PRIMARY KEY or other constraint.
func isConstraint(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

// writeErr turns a constraint failure into a conflict with message msg and wraps anything else.
func writeErr(op string, err error, msg string) error {
	if isConstraint(err) {
		return kiln.Errorf(kiln.EConflict, "%s", msg)
	}
	return fmt.Errorf("sqlitestore: %s: %w", op, err)
}

// readErr turns a missing row into not_found for kind and wraps anything else.
func readErr(op string, err error, kind string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return kiln.NotFound(kind)
	}
	return fmt.Errorf("sqlitestore: %s: %w", op, err)
}

// mustChange returns not_found for kind when res changed no row.
func mustChange(op string, res sql.Result, kind string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	if n == 0 {
		return kiln.NotFound(kind)
	}
	return nil
}

// Times are kept as unix milliseconds and read back in UTC.

func ms(t time.Time) int64 { return t.UnixMilli() }

func optMS(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// dueMS stores a next-attempt time: 0 for the zero time (due now).
func dueMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromDueMS reads a next-attempt time: the zero time for 0.
func fromDueMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return fromMS(v)
}

func fromOptMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// query is a list query under construction: conditions ANDed together.
type query struct {
	conds []string
	args  []any
}

func (q *query) where(cond string, arg any) {
	q.conds = append(q.conds, cond)
	q.args = append(q.args, arg)
}

// inOrg is the query of one organization's rows.
func inOrg(orgID string) query {
	var q query
	q.where("org_id = ?", orgID)
	return q
}

// whereIf adds cond only when the filter value is set.
func whereIf[T ~string](q *query, cond string, v T) {
	if v != "" {
		q.where(cond, string(v))
	}
}

// list runs one page of a newest-first list: cols from table under q, by idCol descending after
// p.After. It asks for one row more than the limit to know whether another page follows.
func list[T any](ctx context.Context, s *Store, op, cols, table, idCol string, q query, p store.Page,
	scan func(scanner) (*T, error), id func(*T) string) ([]*T, string, error) {
	limit := p.Limit
	if limit < 1 || limit > store.MaxLimit {
		limit = store.MaxLimit
	}
	if p.After != "" {
		q.where(idCol+" < ?", p.After)
	}
	text := "SELECT " + cols + " FROM " + table + " WHERE " + strings.Join(q.conds, " AND ") +
		" ORDER BY " + idCol + " DESC LIMIT ?"
	rows, err := s.queryContext(ctx, text, append(q.args, limit+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	defer rows.Close()
	var items []*T
	for rows.Next() {
		it, err := scan(rows)
		if err != nil {
			return nil, "", fmt.Errorf("sqlitestore: %s: %w", op, err)
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	if len(items) <= limit {
		return items, "", nil
	}
	items = items[:limit]
	return items, id(items[limit-1]), nil
}

// getOne runs a one-row read query and scans the row; no row is not_found for kind, and any other
// failure is wrapped with op.
func getOne[T any](ctx context.Context, s *Store, op, kind string, scan func(scanner) (*T, error), text string, args ...any) (*T, error) {
	it, err := scan(s.queryRowContext(ctx, text, args...))
	if err != nil {
		return nil, readErr(op, err, kind)
	}
	return it, nil
}

// insert runs a write that adds a row; a failed constraint is a conflict with message conflict.
func (s *Store) insert(ctx context.Context, op, conflict, text string, args ...any) error {
	if _, err := s.db.ExecContext(ctx, text, args...); err != nil {
		return writeErr(op, err, conflict)
	}
	return nil
}

// change runs a write that must change a row; changing none is not_found for kind.
func (s *Store) change(ctx context.Context, op, kind, text string, args ...any) error {
	res, err := s.db.ExecContext(ctx, text, args...)
	if err != nil {
		return fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	return mustChange(op, res, kind)
}
