-- Chat webhooks: the format of a webhook's deliveries ('' for kiln, as before formats).
ALTER TABLE webhooks ADD COLUMN format TEXT NOT NULL DEFAULT '';
