// Package dynamostore keeps kiln's state in one DynamoDB table (single-table design; see
// docs/dynamodb.md). Every item lives in its organization's partition "ORG#<id>", except the
// global uniqueness and lookup items "SLUG#<slug>", "TOKENHASH#<sha256>",
// "TRIGGERTOKENHASH#<sha256>" and "INSTALLATION#<githubInstallationId>", and the build logs in
// "ORG#<id>#LOG#<buildId>" (logs.go). Lists are queries on one
// partition of the table or of a GSI; multi-item writes are transactions with condition checks.
package dynamostore

import (
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/store"
)

// Store implements store.Store on DynamoDB.
type Store struct {
	db    *dynamo.DB
	table dynamo.Table
	name  string
}

var _ store.Store = (*Store)(nil)

// New returns a store on the table of the given name, which must exist with the layout that
// CreateTable makes.
func New(db *dynamo.DB, table string) *Store {
	return &Store{db: db, table: db.Table(table), name: table}
}

// Close releases nothing: the DynamoDB client holds no connections that need closing.
func (s *Store) Close() error { return nil }

// limit reads a page size as store.Page says: outside 1..MaxLimit it is MaxLimit.
func limit(p store.Page) int {
	if p.Limit < 1 || p.Limit > store.MaxLimit {
		return store.MaxLimit
	}
	return p.Limit
}
