package agentapi

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// ClaimPath is where agents claim builds (POST, with the agent's token).
const ClaimPath = "/agent/v1/claim"

// ClaimRequest is POST /agent/v1/claim: what the agent can build, and how long it waits for a
// build (at most 30 seconds; 0: answer at once).
type ClaimRequest struct {
	// Pool, when set, is the pool the agent was configured with: a token of another pool is a
	// mistake the agent should hear of (validation_failed), not a silent wait.
	Pool           string   `json:"pool,omitempty"`
	Platforms      []string `json:"platforms"`
	EngineVersions []string `json:"engineVersions"`
	WaitSeconds    int      `json:"waitSeconds"`
}

// ClaimAnswer is a build handed to the agent: it runs it through the host API with the build's
// host credential, as a build host launched for it would. HostURL is the service's public URL;
// `kiln agent` uses the URL it claimed with, which the host API is served beside.
type ClaimAnswer struct {
	BuildID        string `json:"buildId"`
	HostCredential string `json:"hostCredential"`
	HostURL        string `json:"hostUrl"`
}

// Dispatcher hands builds to agents (agentpool.Dispatcher).
type Dispatcher interface {
	Authenticate(ctx context.Context, token string) (*kiln.Agent, error)
	Claim(ctx context.Context, a *kiln.Agent, offer agentpool.Offer, wait time.Duration) (*agentpool.Claimed, error)
}

// HostedAuthenticator tells kiln's own hosts by their instance identity
// (hostedhosts.Authenticator).
type HostedAuthenticator interface {
	Authenticate(ctx context.Context, id hostedhosts.Identity) (*kiln.Agent, error)
}

// The headers one of kiln's hosted EC2 hosts claims with, in place of an agent token: its
// instance identity document (base64 of the exact bytes IMDS served) and the document's
// signature (as IMDS served it).
const (
	HeaderInstanceIdentity  = "X-Kiln-Instance-Identity"
	HeaderInstanceSignature = "X-Kiln-Instance-Signature"
)

// Claims serves the agents' claim endpoint.
type Claims struct {
	Dispatcher Dispatcher
	// Hosted authenticates kiln's hosted hosts; nil: the deployment has none, and a claim with
	// an instance identity is refused.
	Hosted HostedAuthenticator
	// HostURL is the service's base URL the agents reach the host API at (KILN_PUBLIC_URL).
	HostURL string
	Logger  *slog.Logger
}

// Limits of a claim's offer.
const (
	maxOffered    = 32
	maxWaitSecond = 30
)

// Handler returns the claim endpoint: 200 with a build, 204 when none came within the wait, 401
// for a malformed, unknown or revoked token.
func (c *Claims) Handler() http.Handler {
	s := &Server{Logger: c.Logger} // for its error envelope
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := kiln.NewRequestID()
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(withRequestID(r.Context(), id))
		if err := c.claim(w, r); err != nil {
			s.writeError(w, r, nil, err)
		}
	})
}

func (c *Claims) claim(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost || r.URL.Path != ClaimPath {
		return kiln.Errorf(kiln.ENotFound, "no such agent API endpoint: %s %s", r.Method, r.URL.Path)
	}
	a, err := c.authenticate(r)
	if err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	var in ClaimRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	offer, err := in.offer()
	if err != nil {
		return err
	}
	if in.Pool != "" && in.Pool != a.Pool {
		return invalid("pool", "this agent's token is for pool "+a.Pool)
	}
	claimed, err := c.Dispatcher.Claim(r.Context(), a, offer, time.Duration(in.WaitSeconds)*time.Second)
	if err != nil {
		return err
	}
	if claimed == nil {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	writeJSON(w, http.StatusOK, ClaimAnswer{BuildID: claimed.Build.ID, HostCredential: claimed.Credential, HostURL: c.HostURL})
	return nil
}

// authenticate finds the claiming agent: an organization's by its token, or one of kiln's
// hosted hosts by its instance identity.
func (c *Claims) authenticate(r *http.Request) (*kiln.Agent, error) {
	doc, sig := r.Header.Get(HeaderInstanceIdentity), r.Header.Get(HeaderInstanceSignature)
	if doc == "" && sig == "" {
		return c.Dispatcher.Authenticate(r.Context(), bearer(r))
	}
	if c.Hosted == nil {
		return nil, kiln.Errorf(kiln.EInvalidToken, "this deployment runs no hosted hosts: claim with an agent token")
	}
	if bearer(r) != "" {
		return nil, kiln.Errorf(kiln.EInvalidToken, "a claim carries an agent token or an instance identity, not both")
	}
	raw, err := base64.StdEncoding.DecodeString(doc)
	if err != nil {
		return nil, kiln.Errorf(kiln.EInvalidToken, "%s is not base64", HeaderInstanceIdentity)
	}
	return c.Hosted.Authenticate(r.Context(), hostedhosts.Identity{Document: string(raw), Signature: sig})
}

// offer checks the request's offer.
func (in ClaimRequest) offer() (agentpool.Offer, error) {
	var o agentpool.Offer
	if len(in.Platforms) == 0 || len(in.Platforms) > maxOffered {
		return o, invalid("platforms", fmt.Sprintf("1 to %d platforms", maxOffered))
	}
	for _, p := range in.Platforms {
		if !kiln.Platform(p).Valid() {
			return o, invalid("platforms", "unknown platform "+fmt.Sprintf("%q", p))
		}
		o.Platforms = append(o.Platforms, kiln.Platform(p))
	}
	if len(in.EngineVersions) == 0 || len(in.EngineVersions) > maxOffered {
		return o, invalid("engineVersions", fmt.Sprintf("1 to %d engine versions", maxOffered))
	}
	for _, v := range in.EngineVersions {
		if !kiln.ValidUEVersion(v) {
			return o, invalid("engineVersions", "engine versions are dotted numbers such as 5.4 or 5.4.1")
		}
	}
	o.EngineVersions = in.EngineVersions
	if in.WaitSeconds < 0 || in.WaitSeconds > maxWaitSecond {
		return o, invalid("waitSeconds", fmt.Sprintf("0 to %d", maxWaitSecond))
	}
	return o, nil
}

// bearer is the request's bearer token, or "".
func bearer(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return tok
}
