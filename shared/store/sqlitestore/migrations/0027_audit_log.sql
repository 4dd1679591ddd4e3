-- Organizations' audit logs: every change, who made it, when and from where (kept a year).
CREATE TABLE audit_events (
	org_id      TEXT NOT NULL,
	id          TEXT NOT NULL,
	at          INTEGER NOT NULL,
	kind        TEXT NOT NULL,
	category    TEXT NOT NULL,
	actor_kind  TEXT NOT NULL,
	actor_id    TEXT NOT NULL,
	actor_name  TEXT NOT NULL,
	actor_email TEXT NOT NULL,
	address     TEXT NOT NULL,
	target      TEXT NOT NULL,
	details     TEXT NOT NULL,
	PRIMARY KEY (org_id, id)
);
CREATE INDEX audit_events_by_time ON audit_events (org_id, at);
