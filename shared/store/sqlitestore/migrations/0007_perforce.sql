-- An organization's Perforce credentials: all NULL until SetPerforce saves them (perforce_server
-- is NULL exactly when none are saved).

ALTER TABLE organizations ADD COLUMN perforce_server      TEXT;
ALTER TABLE organizations ADD COLUMN perforce_user        TEXT;
ALTER TABLE organizations ADD COLUMN perforce_ticket      BLOB; -- sealed ticket
ALTER TABLE organizations ADD COLUMN perforce_fingerprint TEXT;
ALTER TABLE organizations ADD COLUMN perforce_updated_at  INTEGER;
