-- The task token of the Step Functions state waiting for a build's agent (AWS deployment only;
-- '' elsewhere).
ALTER TABLE builds ADD COLUMN task_token TEXT NOT NULL DEFAULT '';
