package dynamostore_test

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/store/storetest"
)

// TestStore runs the store contract suite against DynamoDB Local.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return newStore(t) })
}
