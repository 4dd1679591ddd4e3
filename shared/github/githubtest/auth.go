package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The App key is made once per process: a 2048-bit RSA key takes a noticeable moment.
var (
	keyOnce sync.Once
	keyPEM  []byte
	keyErr  error
)

func appKeyPEM(t TB) []byte {
	keyOnce.Do(func() {
		var key *rsa.PrivateKey
		key, keyErr = rsa.GenerateKey(rand.Reader, 2048)
		if keyErr == nil {
			keyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
		}
	})
	if keyErr != nil {
		t.Fatalf("githubtest: app key: %v", keyErr)
	}
	return keyPEM
}

// maxJWTLifetime is GitHub's limit on exp − iat for an App JWT.
const maxJWTLifetime = 10 * time.Minute

// checkAppJWT verifies the App JWT in the Authorization header as GitHub does: RS256 signed with
// the App's key, iss the App id, iat in the past, exp in the future and at most 10 minutes after
// iat.
func (s *Server) checkAppJWT(r *http.Request) error {
	raw, ok := bearer(r)
	if !ok {
		return errors.New("A JSON web token could not be decoded")
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(s.PrivateKeyPEM)
	if err != nil {
		return err
	}
	claims := &jwt.RegisteredClaims{}
	_, err = jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return &key.PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithTimeFunc(s.now), jwt.WithIssuedAt(),
		jwt.WithExpirationRequired())
	if err != nil {
		return errors.New("'Expiration time' claim ('exp') or signature is invalid: " + err.Error())
	}
	if claims.Issuer != strconv.FormatInt(s.AppID, 10) {
		return errors.New("'Issuer' claim ('iss') must be the App id")
	}
	if claims.IssuedAt == nil || claims.ExpiresAt.Sub(claims.IssuedAt.Time) > maxJWTLifetime {
		return errors.New("'Expiration time' claim ('exp') is too far in the future")
	}
	return nil
}

// bearer returns the credential of an "Authorization: Bearer|token <x>" header.
func bearer(r *http.Request) (string, bool) {
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || cred == "" || !(strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "token")) {
		return "", false
	}
	return cred, true
}

// IssueToken mints an installation token (ghs_...) valid for one hour, as POST
// /app/installations/{id}/access_tokens does, for tests that need one directly (a clone).
func (s *Server) IssueToken(installationID int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, _ := s.issueLocked(installationID)
	return tok
}

func (s *Server) issueLocked(installationID int64) (string, time.Time) {
	tok := "ghs_" + randomHex(18)
	exp := s.now().Add(time.Hour).UTC().Truncate(time.Second)
	s.tokens[tok] = issuedToken{installationID: installationID, expires: exp}
	return tok, exp
}

// tokenInstallation returns the installation of a valid, unexpired installation token.
func (s *Server) tokenInstallation(tok string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.tokens[tok]
	if !ok || !s.now().Before(it.expires) {
		return 0, false
	}
	return it.installationID, true
}

// authInstallation checks the installation token of a request; on failure it has answered 401.
func (s *Server) authInstallation(w http.ResponseWriter, r *http.Request) (int64, bool) {
	tok, ok := bearer(r)
	if ok {
		if id, ok := s.tokenInstallation(tok); ok {
			s.mu.Lock()
			suspended := s.suspendedLocked(id)
			s.mu.Unlock()
			if suspended {
				writeError(w, http.StatusForbidden, "This installation has been suspended")
				return 0, false
			}
			return id, true
		}
	}
	writeError(w, http.StatusUnauthorized, "Bad credentials")
	return 0, false
}

// authRepo checks the installation token and that its installation holds the repository named in
// the path; GitHub answers 404 for repositories a token cannot see.
func (s *Server) authRepo(w http.ResponseWriter, r *http.Request) (*Repo, bool) {
	id, ok := s.authInstallation(w, r)
	if !ok {
		return nil, false
	}
	repo := s.repo(r.PathValue("owner") + "/" + r.PathValue("repo"))
	if repo == nil || repo.InstallationID != id {
		writeError(w, http.StatusNotFound, "Not Found")
		return nil, false
	}
	return repo, true
}
