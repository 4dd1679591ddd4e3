package dynamostore_test

import (
	"os"
	"testing"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/awslocal/dynamodblocal/dynamodblocaltest"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// The tests run against DynamoDB Local (a Java server) in a private network namespace: see
// package dynamodblocaltest.
func TestMain(m *testing.M) { os.Exit(dynamodblocaltest.Main(m)) }

// newDB returns a client for DynamoDB Local.
func newDB() *dynamo.DB { return dynamodblocaltest.DB() }

// newStore creates a fresh table on DynamoDB Local and returns a store on it.
func newStore(t *testing.T) *dynamostore.Store {
	t.Helper()
	s, _ := newStoreTable(t)
	return s
}

// newStoreTable is newStore that also returns the table, for tests that read items as stored.
func newStoreTable(t testing.TB) (*dynamostore.Store, dynamo.Table) {
	t.Helper()
	name, s := dynamodblocaltest.NewTable(t)
	return s, newDB().Table(name)
}
