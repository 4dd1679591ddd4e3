-- Drop-in for customers of the product the API copies: why a build uses its engine version
-- ('' for builds from before), the extra signature header of a webhook ('' for none).
ALTER TABLE builds ADD COLUMN ue_version_source TEXT NOT NULL DEFAULT '';
ALTER TABLE webhooks ADD COLUMN signature_header TEXT NOT NULL DEFAULT '';
-- Perforce credentials given as a password: the sealed password (NULL for a ticket) and when the
-- ticket kiln logged in for expires (0: a ticket given by the customer).
ALTER TABLE organizations ADD COLUMN perforce_password BLOB;
ALTER TABLE organizations ADD COLUMN perforce_ticket_expires_at INTEGER NOT NULL DEFAULT 0;
-- A Perforce project on a classic depot path (//depot/Game/...) instead of a stream ('' for one).
ALTER TABLE projects ADD COLUMN depot_path TEXT NOT NULL DEFAULT '';
