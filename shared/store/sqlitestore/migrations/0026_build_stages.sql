-- Build stages: the stages a build went through, as JSON ([{"name","startedAt","endedAt"}],
-- times in Unix milliseconds); '' for none.
ALTER TABLE builds ADD COLUMN stages TEXT NOT NULL DEFAULT '';
