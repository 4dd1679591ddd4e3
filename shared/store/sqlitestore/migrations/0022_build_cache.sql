-- Warm builds: whether the trigger asked for a clean build, and how the build started (warm from
-- the cache a build saved, or cold and why).
ALTER TABLE builds ADD COLUMN clean INTEGER NOT NULL DEFAULT 0;
ALTER TABLE builds ADD COLUMN cache_state TEXT NOT NULL DEFAULT '';
ALTER TABLE builds ADD COLUMN cache_from TEXT NOT NULL DEFAULT '';
ALTER TABLE builds ADD COLUMN cache_reason TEXT NOT NULL DEFAULT '';
