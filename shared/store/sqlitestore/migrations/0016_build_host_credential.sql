-- The SHA-256 (hex) of the per-build credential a remote build host reports with; '' for a build
-- run in-process.
ALTER TABLE builds ADD COLUMN host_credential_hash TEXT NOT NULL DEFAULT '';
