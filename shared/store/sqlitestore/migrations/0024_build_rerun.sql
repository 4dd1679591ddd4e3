-- Re-runs: the id of the build a build re-runs ('' for a build triggered otherwise).
ALTER TABLE builds ADD COLUMN rerun_of TEXT NOT NULL DEFAULT '';
