package github

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const (
	// jwtBackdate guards against clock drift: GitHub refuses a JWT issued in its future.
	jwtBackdate = 60 * time.Second
	// jwtLifetime stays under GitHub's 10-minute limit.
	jwtLifetime = 9 * time.Minute
	// tokenMargin is how long before expiry an installation token is replaced.
	tokenMargin = 5 * time.Minute
	// tokenTimeout bounds the shared token request, which outlives any one caller's context.
	tokenTimeout = 30 * time.Second
)

type installationToken struct {
	token   string
	expires time.Time
}

// appTransport signs requests as the App.
type appTransport struct {
	c    *Client
	next http.RoundTripper
}

func (t *appTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.c.appJWT()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok)
	return t.next.RoundTrip(req)
}

// appJWT returns the App's JWT (RS256; iss the App id; iat a minute ago; exp in 9 minutes),
// reusing one until a minute before it expires.
func (c *Client) appJWT() (string, error) {
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.jwt != "" && !now.Before(c.jwtIat) && now.Add(time.Minute).Before(c.jwtExp) {
		return c.jwt, nil
	}
	iat, exp := now.Add(-jwtBackdate), now.Add(jwtLifetime)
	tok, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
		Issuer:    strconv.FormatInt(c.cfg.AppID, 10),
		IssuedAt:  jwt.NewNumericDate(iat),
		ExpiresAt: jwt.NewNumericDate(exp),
	}).SignedString(c.key)
	if err != nil {
		return "", err
	}
	c.jwt, c.jwtIat, c.jwtExp = tok, now, exp
	return tok, nil
}

// installationToken returns a token of the installation, cached until 5 minutes before it
// expires. Concurrent callers for one installation share one request.
func (c *Client) installationToken(ctx context.Context, id int64) (string, error) {
	if tok, ok := c.cachedToken(id); ok {
		return tok, nil
	}
	ch := c.flight.DoChan(strconv.FormatInt(id, 10), func() (any, error) {
		if tok, ok := c.cachedToken(id); ok {
			return tok, nil
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tokenTimeout)
		defer cancel()
		t, _, err := c.app.Apps.CreateInstallationToken(fctx, id, nil)
		if err != nil {
			inv := invalidInstallation(id)
			return "", c.fail("create installation token", err, statusErrors{401: inv, 403: inv, 404: inv})
		}
		if t.GetToken() == "" || t.ExpiresAt == nil {
			return "", c.fail("create installation token", errMalformed, nil)
		}
		c.mu.Lock()
		c.tokens[id] = installationToken{token: t.GetToken(), expires: t.GetExpiresAt().Time}
		c.mu.Unlock()
		return t.GetToken(), nil
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	}
}

func (c *Client) cachedToken(id int64) (string, bool) {
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tokens[id]
	if !ok || !now.Add(tokenMargin).Before(t.expires) {
		return "", false
	}
	return t.token, true
}

// forgetToken drops a cached token GitHub no longer accepts (the installation was removed).
func (c *Client) forgetToken(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tokens, id)
}

// InstallationToken returns a token of the installation for cloning its repositories (HTTP basic
// auth as x-access-token). It is cached like every installation token; never log it.
func (c *Client) InstallationToken(ctx context.Context, installationID int64) (string, error) {
	return c.installationToken(ctx, installationID)
}
