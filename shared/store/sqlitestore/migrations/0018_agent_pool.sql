-- The pool of the organization's agents that runs a setting's builds, copied onto each build at
-- trigger; '' for the service's own hosts.
ALTER TABLE build_settings ADD COLUMN agent_pool TEXT NOT NULL DEFAULT '';
ALTER TABLE builds ADD COLUMN agent_pool TEXT NOT NULL DEFAULT '';
