package dynamostore_test

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/buildlog/logstoretest"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// TestLogs runs the log store contract suite against DynamoDB Local.
func TestLogs(t *testing.T) {
	logstoretest.Run(t, func(t *testing.T) (logstoretest.Store, func() logstoretest.Store) {
		_, table := newStoreTable(t)
		db := newDB(endpoint())
		return dynamostore.NewLogs(db, table.Name()), func() logstoretest.Store { return dynamostore.NewLogs(newDB(endpoint()), table.Name()) }
	})
}
