package sqlitestore

import "github.com/kilnbuild/kiln/shared/kiln"

// credentialCols are the columns every credential table (tokens, trigger_tokens, agents) has for
// kiln.Credential; each credential's column list starts with them.
const credentialCols = `org_id, id, name, hash, hint, created_at`

// scanCredential scans a row of credentialCols and then more columns: the credential's into c, the
// others into rest.
func scanCredential(r scanner, c *kiln.Credential, rest ...any) error {
	var created int64
	if err := r.Scan(append([]any{&c.OrganizationID, &c.ID, &c.Name, &c.Hash, &c.Hint, &created}, rest...)...); err != nil {
		return err
	}
	c.CreatedAt = fromMS(created)
	return nil
}

// credentialArgs are the values of credentialCols for c, followed by rest.
func credentialArgs(c *kiln.Credential, rest ...any) []any {
	return append([]any{c.OrganizationID, c.ID, c.Name, c.Hash, c.Hint, ms(c.CreatedAt)}, rest...)
}
