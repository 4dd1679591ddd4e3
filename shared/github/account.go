package github

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Account is the GitHub account behind a user access token: GitHub's user id, which never
// changes, its login and its display name.
type Account struct {
	ID    int64
	Login string
	// Name is the account's display name, or its login when it has none.
	Name string
}

// AccountOf reads who a user access token (from ExchangeCode) belongs to: GET /user. It needs no
// permission of the App. A token GitHub refuses → validation_failed on "code".
func (c *Client) AccountOf(ctx context.Context, userToken string) (*Account, error) {
	u, _, err := c.base.WithAuthToken(userToken).Users.Get(ctx, "")
	if err != nil {
		return nil, c.fail("get the signed-in user", err, statusErrors{401: refusedAuthorization()})
	}
	if u.GetID() == 0 || u.GetLogin() == "" {
		return nil, c.fail("get the signed-in user", errMalformed, nil)
	}
	name := u.GetName()
	if name == "" {
		name = u.GetLogin()
	}
	return &Account{ID: u.GetID(), Login: u.GetLogin(), Name: name}, nil
}

// refusedAuthorization is the error for a user access token GitHub does not accept.
func refusedAuthorization() *kiln.Error {
	return invalidField("code", "GitHub did not accept the user's authorization; sign in or install again")
}
