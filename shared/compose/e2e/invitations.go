package e2e

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/store"
)

// StoreOf is the store of the service under test, for writes the API does not offer: kiln
// serve's SQLite database or aws-local's DynamoDB table.
func StoreOf(t *testing.T, ts *Server) store.Store {
	t.Helper()
	if ts.AWS != nil {
		return ts.AWS.Store()
	}
	return ts.Service.Store()
}
