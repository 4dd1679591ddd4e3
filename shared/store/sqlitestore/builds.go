package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

const buildCols = `org_id, id, project_id, build_setting_id, status, platform, build_type, branch, commit_sha,
	commit_message, changelist, ue_version, triggered_by, failure_reason, auto_deploy_status, auto_deploy_error,
	auto_deploy_attempts, created_at, started_at, finished_at, heartbeat_at, auto_deploy_next_at, host, host_credential_hash, agent_pool, task_token, build_minutes,
	clean, cache_state, cache_from, cache_reason, number, rerun_of, stages, ue_version_source`

func scanBuild(r scanner) (*kiln.Build, error) {
	var b kiln.Build
	var created, nextAt int64
	var started, finished, heartbeat sql.NullInt64
	var stages string
	if err := r.Scan(&b.OrganizationID, &b.ID, &b.ProjectID, &b.BuildSettingID, &b.Status, &b.Platform,
		&b.BuildType, &b.Branch, &b.Commit, &b.CommitMessage, &b.Changelist, &b.UEVersion, &b.TriggeredBy,
		&b.FailureReason, &b.AutoDeployStatus, &b.AutoDeployError, &b.AutoDeployAttempts, &created, &started,
		&finished, &heartbeat, &nextAt, &b.Host, &b.HostCredentialHash, &b.AgentPool, &b.TaskToken, &b.BuildMinutes,
		&b.Clean, &b.Cache, &b.CacheFrom, &b.CacheReason, &b.Number, &b.RerunOf, &stages, &b.UEVersionSource); err != nil {
		return nil, err
	}
	var err error
	if b.Stages, err = parseStages(stages); err != nil {
		return nil, fmt.Errorf("build %s: %w", b.ID, err)
	}
	b.CreatedAt, b.StartedAt, b.FinishedAt = fromMS(created), fromOptMS(started), fromOptMS(finished)
	b.HeartbeatAt, b.AutoDeployNextAt = fromOptMS(heartbeat), fromDueMS(nextAt)
	return &b, nil
}

// CreateBuild numbers the build and inserts it in one transaction.
func (s *Store) CreateBuild(ctx context.Context, b *kiln.Build) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return insertBuild(ctx, tx, b) })
}

// insertBuild takes the next number of the build's project and inserts the build; db must be a
// transaction, so a failed insert gives the number back. A build whose project is not stored
// gets no number (0).
func insertBuild(ctx context.Context, db execer, b *kiln.Build) error {
	b.Number = 0
	err := db.QueryRowContext(ctx, `UPDATE projects SET build_count = build_count + 1
		WHERE org_id = ? AND id = ? RETURNING build_count`, b.OrganizationID, b.ProjectID).Scan(&b.Number)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlitestore: create build: number: %w", err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO builds (`+buildCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		b.OrganizationID, b.ID, b.ProjectID, b.BuildSettingID, b.Status, b.Platform, b.BuildType, b.Branch,
		b.Commit, b.CommitMessage, b.Changelist, b.UEVersion, b.TriggeredBy, b.FailureReason,
		b.AutoDeployStatus, b.AutoDeployError, b.AutoDeployAttempts, ms(b.CreatedAt), optMS(b.StartedAt),
		optMS(b.FinishedAt), optMS(b.HeartbeatAt), dueMS(b.AutoDeployNextAt), b.Host, b.HostCredentialHash, b.AgentPool, b.TaskToken, b.BuildMinutes,
		b.Clean, b.Cache, b.CacheFrom, b.CacheReason, b.Number, b.RerunOf, stagesText(b.Stages), b.UEVersionSource)
	if err != nil {
		b.Number = 0
		return writeErr("create build", err, "the build already exists")
	}
	return nil
}

func (s *Store) GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error) {
	return getOne(ctx, s, "get build", "build", scanBuild,
		`SELECT `+buildCols+` FROM builds WHERE org_id = ? AND id = ?`, orgID, id)
}

func (s *Store) ListBuilds(ctx context.Context, orgID string, f store.BuildFilter, p store.Page) ([]*kiln.Build, string, error) {
	q := inOrg(orgID)
	whereIf(&q, "project_id = ?", f.ProjectID)
	whereIf(&q, "build_setting_id = ?", f.BuildSettingID)
	whereIf(&q, "status = ?", f.Status)
	whereIf(&q, "platform = ?", f.Platform)
	whereIf(&q, "build_type = ?", f.BuildType)
	whereIf(&q, "branch = ?", f.Branch)
	return list(ctx, s, "list builds", buildCols, "builds", "id", q, p, scanBuild,
		func(b *kiln.Build) string { return b.ID })
}

// UpdateBuild writes the named fields of b only if the stored build's status is still expected,
// then reads the build back into b.
func (s *Store) UpdateBuild(ctx context.Context, b *kiln.Build, expected kiln.BuildStatus, fields kiln.BuildFields) error {
	if b.TaskToken == "" {
		fields &^= kiln.FieldTaskToken // a token is never removed
	}
	set, args := buildSets(b, fields)
	return s.tx(ctx, func(tx *sql.Tx) error {
		// Setting status to itself keeps the statement valid when no field is named.
		res, err := tx.ExecContext(ctx, `UPDATE builds SET status = status`+set+` WHERE org_id = ? AND id = ? AND status = ?`,
			append(args, b.OrganizationID, b.ID, expected)...)
		if err != nil {
			return fmt.Errorf("sqlitestore: update build: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlitestore: update build: %w", err)
		}
		if n == 1 {
			if fields.Has(kiln.FieldStatus) && store.MetersEnd(b, expected) {
				if err := addMinutes(ctx, tx, b); err != nil {
					return err
				}
			}
			stored, err := scanBuild(tx.QueryRowContext(ctx, `SELECT `+buildCols+` FROM builds WHERE org_id = ? AND id = ?`, b.OrganizationID, b.ID))
			if err != nil {
				return readErr("update build", err, "build")
			}
			*b = *stored
			return nil
		}
		var status kiln.BuildStatus
		err = tx.QueryRowContext(ctx, `SELECT status FROM builds WHERE org_id = ? AND id = ?`, b.OrganizationID, b.ID).Scan(&status)
		if err != nil {
			return readErr("update build", err, "build")
		}
		return kiln.Errorf(kiln.EInvalidState, "build %s is %s, not %s", b.ID, status, expected)
	})
}

// buildSets is the SET list (", col = ?" each) and its arguments for the named fields of b.
func buildSets(b *kiln.Build, fields kiln.BuildFields) (string, []any) {
	cols := []struct {
		field kiln.BuildFields
		col   string
		value any
	}{
		{kiln.FieldStatus, "status", b.Status},
		{kiln.FieldProjectID, "project_id", b.ProjectID},
		{kiln.FieldBuildSettingID, "build_setting_id", b.BuildSettingID},
		{kiln.FieldPlatform, "platform", b.Platform},
		{kiln.FieldBuildType, "build_type", b.BuildType},
		{kiln.FieldBranch, "branch", b.Branch},
		{kiln.FieldCommit, "commit_sha", b.Commit},
		{kiln.FieldCommitMessage, "commit_message", b.CommitMessage},
		{kiln.FieldChangelist, "changelist", b.Changelist},
		{kiln.FieldUEVersion, "ue_version", b.UEVersion},
		{kiln.FieldTriggeredBy, "triggered_by", b.TriggeredBy},
		{kiln.FieldFailureReason, "failure_reason", b.FailureReason},
		{kiln.FieldAutoDeployStatus, "auto_deploy_status", b.AutoDeployStatus},
		{kiln.FieldAutoDeployError, "auto_deploy_error", b.AutoDeployError},
		{kiln.FieldAutoDeployAttempts, "auto_deploy_attempts", b.AutoDeployAttempts},
		{kiln.FieldAutoDeployNextAt, "auto_deploy_next_at", dueMS(b.AutoDeployNextAt)},
		{kiln.FieldStartedAt, "started_at", optMS(b.StartedAt)},
		{kiln.FieldFinishedAt, "finished_at", optMS(b.FinishedAt)},
		{kiln.FieldHeartbeatAt, "heartbeat_at", optMS(b.HeartbeatAt)},
		{kiln.FieldHost, "host", b.Host},
		{kiln.FieldHostCredentialHash, "host_credential_hash", b.HostCredentialHash},
		{kiln.FieldAgentPool, "agent_pool", b.AgentPool},
		{kiln.FieldTaskToken, "task_token", b.TaskToken},
		{kiln.FieldBuildMinutes, "build_minutes", b.BuildMinutes},
		{kiln.FieldCache, "cache_state", b.Cache},
		{kiln.FieldCache, "cache_from", b.CacheFrom},
		{kiln.FieldCache, "cache_reason", b.CacheReason},
		{kiln.FieldStages, "stages", stagesText(b.Stages)},
	}
	var set strings.Builder
	var args []any
	for _, c := range cols {
		if fields.Has(c.field) {
			set.WriteString(", " + c.col + " = ?")
			args = append(args, c.value)
		}
	}
	return set.String(), args
}
