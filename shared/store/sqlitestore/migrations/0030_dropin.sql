-- Drop-in for customers of the product the API copies: why a build uses its engine version
-- ('' for builds from before), the extra signature header of a webhook ('' for none).
ALTER TABLE builds ADD COLUMN ue_version_source TEXT NOT NULL DEFAULT '';
ALTER TABLE webhooks ADD COLUMN signature_header TEXT NOT NULL DEFAULT '';
