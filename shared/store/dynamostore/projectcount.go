package dynamostore

import (
	"context"

	"github.com/guregu/dynamo/v2"
)

// attrProjectCount is the organization item's count of its projects. CreateProject adds 1 in the
// transaction that puts the project, on the condition that the count is below the plan's limit;
// DeleteProject subtracts 1 in the transaction that deletes it. A limit checked by counting the
// project items first and writing after would let two creations at the same moment both pass.
const attrProjectCount = "projectCount"

// orgCounterUpdate is the update of the organization's project count by delta, on the condition
// that the count exists and, when max > 0, is below max.
func (s *Store) orgCounterUpdate(orgID string, delta, max int) *dynamo.Update {
	u := s.table.Update(attrPK, orgPK(orgID)).Range(attrSK, orgSK).Add(attrProjectCount, delta)
	if max > 0 {
		return u.If("$ < ?", attrProjectCount, max) // false when the count is absent
	}
	return u.If("attribute_exists($)", attrProjectCount)
}

// projectCount reads the organization's project count; ok is false when the organization has
// none yet. A missing organization is not_found.
func (s *Store) projectCount(ctx context.Context, orgID string) (n int, ok bool, err error) {
	it, err := getItem[orgItem](ctx, s, "read project count", "organization", orgPK(orgID), orgSK)
	if err != nil {
		return 0, false, err
	}
	if it.ProjectCount == nil {
		return 0, false, nil
	}
	return *it.ProjectCount, true, nil
}

// initProjectCount gives an organization stored before the count existed its count, from a
// consistent query of its project items, written only if the count is still absent.
//
// Why the count is exact when written: while the count is absent, no project of the organization
// is created or deleted, because CreateProject's and DeleteProject's transactions are conditional
// on the count existing (and call this first when it does not). So between this query and the
// write nothing changes the projects unless another caller's count got written in between, and
// then this write's condition fails and its count is dropped: of several callers at once, the
// first to write wins and the others keep its count. (Writers of a version without the count,
// during a rolling upgrade, are the one exception; once they are gone the count stays exact.)
func (s *Store) initProjectCount(ctx context.Context, orgID string) error {
	q := listQuery{pkAttr: attrPK, skAttr: attrSK, pk: orgPK(orgID), skPrefix: prefixProject}
	items, _, err := queryPage(ctx, s, q, 0, func(it *itemKeys) string { return "" })
	if err != nil {
		return wrap("count projects", err)
	}
	err = s.table.Update(attrPK, orgPK(orgID)).Range(attrSK, orgSK).Set(attrProjectCount, len(items)).
		If("attribute_exists($) AND attribute_not_exists($)", attrPK, attrProjectCount).Run(ctx)
	if isCondFailed(err) {
		_, _, err = s.projectCount(ctx, orgID) // not_found, or someone else's count won
		return err
	}
	return wrap("initialize project count", err)
}

// ensureProjectCount initializes the organization's project count if it has none.
func (s *Store) ensureProjectCount(ctx context.Context, orgID string) error {
	_, ok, err := s.projectCount(ctx, orgID)
	if err != nil || ok {
		return err
	}
	return s.initProjectCount(ctx, orgID)
}
