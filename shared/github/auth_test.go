package github

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

func TestAppJWT(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	raw, err := f.c.appJWT()
	if err != nil {
		t.Fatal(err)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(f.gh.PrivateKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	claims := &jwt.RegisteredClaims{}
	tok, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return &key.PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithTimeFunc(f.clock.Now))
	if err != nil || !tok.Valid {
		t.Fatalf("App JWT does not verify: %v", err)
	}
	now := f.clock.Now()
	if claims.Issuer != strconv.FormatInt(f.gh.AppID, 10) {
		t.Errorf("iss %q, want the App id", claims.Issuer)
	}
	if !claims.IssuedAt.Equal(now.Add(-60 * time.Second)) {
		t.Errorf("iat %v, want a minute before %v", claims.IssuedAt, now)
	}
	if !claims.ExpiresAt.Equal(now.Add(9*time.Minute)) || claims.ExpiresAt.Sub(claims.IssuedAt.Time) > 10*time.Minute {
		t.Errorf("exp %v, want 9 minutes after %v and at most 10 after iat", claims.ExpiresAt, now)
	}
	// The fake checks the same rules: an App call works.
	if _, err := f.c.Installation(context.Background(), studio); err != nil {
		t.Fatal(err)
	}
}

func TestInstallationTokenCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.gh.AddRepo(studio, "studio/shooter", true, "main")
	ctx := context.Background()
	read := func() {
		t.Helper()
		if _, err := f.c.Repo(ctx, studio, "studio/shooter"); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		advance time.Duration
		tokens  int // token requests so far
	}{
		{"first call gets a token", 0, 1},
		{"second call reuses it", 0, 1},
		{"still fresh 54 minutes later", 54 * time.Minute, 1},
		{"refreshed within 5 minutes of expiry", 2 * time.Minute, 2},
		{"the new token is reused", time.Minute, 2},
	}
	for _, tt := range tests {
		f.clock.Advance(tt.advance)
		read()
		if got := f.gh.Requests(githubtest.RouteAccessToken); got != tt.tokens {
			t.Fatalf("%s: %d token requests, want %d", tt.name, got, tt.tokens)
		}
	}
}

func TestConcurrentCallersShareOneTokenRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.gh.AddRepo(studio, "studio/shooter", true, "main")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.c.Repo(context.Background(), studio, "studio/shooter")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := f.gh.Requests(githubtest.RouteAccessToken); got != 1 {
		t.Fatalf("%d token requests, want 1", got)
	}
}
