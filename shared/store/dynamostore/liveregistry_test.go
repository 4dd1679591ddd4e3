package dynamostore_test

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/live"
	"github.com/kilnbuild/kiln/shared/live/livetest"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// TestLiveRegistry runs the live registry's contract suite against DynamoDB Local.
func TestLiveRegistry(t *testing.T) {
	livetest.RunRegistry(t, func(t *testing.T) live.Registry {
		_, table := newStoreTable(t)
		return dynamostore.NewLiveRegistry(newDB(), table.Name())
	})
}
