package dynamostore_test

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/buildlog/logstoretest"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// TestLogs runs the log store contract suite against DynamoDB Local.
func TestLogs(t *testing.T) {
	logstoretest.Run(t, func(t *testing.T) (logstoretest.Store, func() logstoretest.Store) {
		_, table := newStoreTable(t)
		db := newDB()
		return dynamostore.NewLogs(db, table.Name()), func() logstoretest.Store { return dynamostore.NewLogs(newDB(), table.Name()) }
	})
}

// TestLogsRetention: chunks carry the log's expiry for the table's time to live, and an expired
// log reads as gone before DynamoDB deletes it.
func TestLogsRetention(t *testing.T) {
	logstoretest.Retention(t, func(t *testing.T, retention time.Duration, now func() time.Time) logstoretest.Store {
		_, table := newStoreTable(t)
		l := dynamostore.NewLogs(newDB(), table.Name())
		l.SetRetention(retention, now)
		return l
	})
}
