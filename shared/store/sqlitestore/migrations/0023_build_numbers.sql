-- Build numbers: each project counts its builds (the number its last build took), and a build
-- keeps the number it took at trigger; builds stored before this migration keep 0 (no number).
ALTER TABLE projects ADD COLUMN build_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE builds ADD COLUMN number INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX builds_by_number ON builds (org_id, project_id, number) WHERE number > 0;
