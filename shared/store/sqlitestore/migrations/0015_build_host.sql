-- The host (or executor) that claimed a build and runs it; '' for a build no host claimed.
ALTER TABLE builds ADD COLUMN host TEXT NOT NULL DEFAULT '';
