package dynamostore_test

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/store/storetest"
)

// TestMeteringFailureLeavesTheBuildRunning makes the update of the usage item fail (its minutes
// attribute holds a string, so ADD is refused): the transaction writes nothing, the build stays
// running, and once the item is repaired the end is written and counted exactly once.
func TestMeteringFailureLeavesTheBuildRunning(t *testing.T) {
	s, table := newStoreTable(t)
	storetest.MeteringFailure(t, s, func(orgID, month string) {
		usage := map[string]any{"PK": "ORG#" + orgID, "SK": "USAGE#" + month, "type": "usage", "minutes_Linux": "not a number"}
		if err := table.Put(usage).Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	}, func(orgID, month string) {
		if err := table.Delete("PK", "ORG#"+orgID).Range("SK", "USAGE#"+month).Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}
