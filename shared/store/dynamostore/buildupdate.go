package dynamostore

import (
	"context"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// buildAttrs are the item attributes of each field an update may write, besides the index keys
// (buildKeyAttrs).
var buildAttrs = []struct {
	field kiln.BuildFields
	attr  string
}{
	{kiln.FieldStatus, "status"},
	{kiln.FieldProjectID, "projectId"},
	{kiln.FieldBuildSettingID, "buildSettingId"},
	{kiln.FieldPlatform, "platform"},
	{kiln.FieldBuildType, "buildType"},
	{kiln.FieldBranch, "branch"},
	{kiln.FieldCommit, "commit"},
	{kiln.FieldCommitMessage, "commitMessage"},
	{kiln.FieldChangelist, "changelist"},
	{kiln.FieldUEVersion, "ueVersion"},
	{kiln.FieldTriggeredBy, "triggeredBy"},
	{kiln.FieldFailureReason, "failureReason"},
	{kiln.FieldAutoDeployStatus, "autoDeployStatus"},
	{kiln.FieldAutoDeployError, "autoDeployError"},
	{kiln.FieldAutoDeployAttempts, "autoDeployAttempts"},
	{kiln.FieldAutoDeployNextAt, "autoDeployNextAt"},
	{kiln.FieldStartedAt, "startedAt"},
	{kiln.FieldFinishedAt, "finishedAt"},
	{kiln.FieldHeartbeatAt, "heartbeatAt"},
	{kiln.FieldHost, "host"},
	{kiln.FieldHostCredentialHash, "hostCredentialHash"},
	{kiln.FieldAgentPool, "agentPool"},
	{kiln.FieldTaskToken, "taskToken"},
	{kiln.FieldBuildMinutes, "buildMinutes"},
	{kiln.FieldCache, "cacheState"},
	{kiln.FieldCache, "cacheFrom"},
	{kiln.FieldCache, "cacheReason"},
	{kiln.FieldStages, "stages"},
}

// gsi4Inputs are the fields GSI4's keys are computed from (see buildItem).
const gsi4Inputs = kiln.FieldStatus | kiln.FieldAutoDeployStatus | kiln.FieldAutoDeployNextAt

// buildKeyAttrs are the index key attributes that follow the named fields.
func buildKeyAttrs(fields kiln.BuildFields) []string {
	var attrs []string
	if fields.Has(kiln.FieldProjectID) {
		attrs = append(attrs, attrGSI1PK, attrGSI1SK)
	}
	if fields.Has(kiln.FieldBuildSettingID) {
		attrs = append(attrs, attrGSI2PK, attrGSI2SK)
	}
	if fields.Has(kiln.FieldStatus) {
		attrs = append(attrs, attrGSI3PK)
	}
	if fields.Any(gsi4Inputs) {
		attrs = append(attrs, attrGSI4PK, attrGSI4SK)
	}
	return attrs
}

// UpdateBuild updates only the attributes of the named fields (and the index keys that follow
// them; an attribute b leaves out is removed), on the condition that the item exists and its
// status is still expected. When it recomputes GSI4's keys from fields it does not write, the
// stored values of those must still be b's too (else invalid_state: the build changed
// meanwhile). The updated item is read back into b. When the condition fails, the stored item
// returned with the failure tells invalid_state (it exists) from not_found.
func (s *Store) UpdateBuild(ctx context.Context, b *kiln.Build, expected kiln.BuildStatus, fields kiln.BuildFields) error {
	if b.TaskToken == "" {
		fields &^= kiln.FieldTaskToken // a token is never removed
	}
	var attrs []string
	for _, a := range buildAttrs {
		if fields.Has(a.field) {
			attrs = append(attrs, a.attr)
		}
	}
	attrs = append(attrs, buildKeyAttrs(fields)...)
	item := newBuildItem(b)
	u, err := s.fieldsUpdate(orgPK(b.OrganizationID), buildSK(b.ID), item, attrs)
	if err != nil {
		return wrap("update build", err)
	}
	if !fields.Has(kiln.FieldStatus) {
		u.Set("status", string(expected)) // what the condition requires: an update always sets something
	}
	u.If("attribute_exists($) AND $ = ?", attrPK, "status", string(expected))
	if fields.Any(gsi4Inputs) {
		if !fields.Has(kiln.FieldAutoDeployStatus) {
			ifEqualOrAbsent(u, "autoDeployStatus", item.AutoDeployStatus, item.AutoDeployStatus == "")
		}
		if !fields.Has(kiln.FieldAutoDeployNextAt) {
			ifEqualOrAbsent(u, "autoDeployNextAt", item.AutoDeployNextAt, item.AutoDeployNextAt == 0)
		}
	}
	if fields.Has(kiln.FieldStatus) && store.MetersEnd(b, expected) {
		failed, err := s.endBuild(ctx, b, u)
		if err != nil {
			return err
		}
		if failed {
			return s.updateRefused(ctx, b, expected)
		}
		stored, err := s.GetBuild(ctx, b.OrganizationID, b.ID)
		if err != nil {
			return err
		}
		*b = *stored
		return nil
	}
	var stored buildItem
	err = u.Value(ctx, &stored)
	if isCondFailed(err) {
		return s.updateRefused(ctx, b, expected)
	}
	if err != nil {
		return wrap("update build", err)
	}
	*b = *stored.build()
	return nil
}

// ifEqualOrAbsent adds u the condition that attribute attr holds v, or is absent when v is
// empty (such attributes are left out while empty).
func ifEqualOrAbsent(u *dynamo.Update, attr string, v any, empty bool) {
	if empty {
		u.If("attribute_not_exists($)", attr)
		return
	}
	u.If("$ = ?", attr, v)
}

// updateRefused tells why UpdateBuild's condition failed: not_found, or invalid_state when the
// status moved on or the fields GSI4 follows changed meanwhile.
func (s *Store) updateRefused(ctx context.Context, b *kiln.Build, expected kiln.BuildStatus) error {
	stored, err := s.GetBuild(ctx, b.OrganizationID, b.ID)
	if err != nil {
		return err
	}
	if stored.Status != expected {
		return kiln.Errorf(kiln.EInvalidState, "build %s is %s, not %s", b.ID, stored.Status, expected)
	}
	return kiln.Errorf(kiln.EInvalidState, "build %s changed meanwhile", b.ID)
}
