package dynamostore

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// attrBuildCount is the project item's count of its builds: the number its last build took.
// takeBuildNumber adds 1 to it before the build is put, so concurrent triggers never share a
// number. The put may still fail after the number was taken (an id or idempotency key already
// used, a fault): that number is skipped. Numbers are unique and increasing per project, not
// always consecutive.
const attrBuildCount = "buildCount"

// takeBuildNumber sets b.Number to the next number of its project, 0 when the project is not
// stored (an ADD conditional on the item existing, so it never makes a project item up).
func (s *Store) takeBuildNumber(ctx context.Context, b *kiln.Build) error {
	b.Number = 0
	if b.ProjectID == "" {
		return nil
	}
	var out struct {
		BuildCount int64 `dynamo:"buildCount"`
	}
	err := s.table.Update(attrPK, orgPK(b.OrganizationID)).Range(attrSK, projectSK(b.ProjectID)).
		Add(attrBuildCount, 1).If(exists, attrPK).OnlyUpdatedValue(ctx, &out)
	if isCondFailed(err) {
		return nil
	}
	if err != nil {
		return wrap("create build: number", err)
	}
	b.Number = out.BuildCount
	return nil
}
