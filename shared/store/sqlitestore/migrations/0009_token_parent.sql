-- A token created with another token (POST /auth/tokens with a bearer token) records that parent;
-- revoking a token revokes the tokens made from it, and theirs. '' for tokens made otherwise.

ALTER TABLE tokens ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
CREATE INDEX tokens_by_parent ON tokens (org_id, user_id, parent_id);
