package dynamostore_test

import (
	"os"
	"testing"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/store/dynamostore"
	"github.com/kilnbuild/kiln/shared/store/dynamostore/dynamolocal"
)

// The tests run against DynamoDB Local (a Java server) in a private network namespace: see
// package dynamolocal.
func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }

// newDB returns a client for DynamoDB Local.
func newDB(url string) *dynamo.DB { return dynamolocal.NewDB(url) }

// endpoint is DynamoDB Local's URL (set by dynamolocal.Main inside the namespace).
var endpoint = func() string { return dynamolocal.Endpoint }

// newStore creates a fresh table on DynamoDB Local and returns a store on it.
func newStore(t *testing.T) *dynamostore.Store {
	t.Helper()
	s, _ := newStoreTable(t)
	return s
}

// newStoreTable is newStore that also returns the table, for tests that read items as stored.
func newStoreTable(t testing.TB) (*dynamostore.Store, dynamo.Table) {
	t.Helper()
	name, s := dynamolocal.NewTable(t)
	return s, newDB(dynamolocal.Endpoint).Table(name)
}
