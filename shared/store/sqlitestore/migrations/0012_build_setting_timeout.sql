-- A build setting may lower the service's build time limit (0: the service's own).
ALTER TABLE build_settings ADD COLUMN timeout_minutes INTEGER NOT NULL DEFAULT 0;
