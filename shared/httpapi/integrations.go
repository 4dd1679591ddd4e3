package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

type githubLinkPatch struct {
	InstallationID *string `json:"installationId"`
}

type integrationsPatch struct {
	GitHub Optional[githubLinkPatch] `json:"github"`
}

// githubLinkRequest is what a PATCH of integrationSettings asks: nothing, unlink, or link id.
type githubLinkRequest struct {
	set            bool
	unlink         bool
	installationID string
}

// checkGitHubLink validates integrationSettings of a PATCH and, for a link by id, asks GitHub
// whether the installation exists. Linking by a bare id is allowed only when the server has no
// OAuth client configured (a studio's own kiln); otherwise the verified install flow is the way.
func (s *Server) checkGitHubLink(ctx context.Context, patch Optional[integrationsPatch], errs kiln.FieldErrors) (githubLinkRequest, error) {
	var req githubLinkRequest
	if !patch.Set {
		return req, nil
	}
	if patch.Null {
		errs.Add("integrationSettings", "must be an object such as {\"github\": {\"installationId\": \"123\"}}")
		return req, nil
	}
	gh := patch.Value.GitHub
	if !gh.Set {
		return req, nil
	}
	req.set = true
	if gh.Null {
		req.unlink = true
		return req, nil
	}
	switch {
	case s.github == nil:
		errs.Add("integrationSettings", "this server has no GitHub App configured (KILN_GITHUB_APP_ID, KILN_GITHUB_APP_KEY)")
		return req, nil
	case s.githubOAuth:
		errs.Add("integrationSettings", "link the installation through GitHub's install flow: GET /integrations/github/install")
		return req, nil
	}
	id := strings.TrimSpace(deref(gh.Value.InstallationID))
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		errs.Add("integrationSettings.github.installationId", "is required and must be a GitHub installation id (digits)")
		return req, nil
	}
	if len(errs) > 0 {
		return req, nil // no GitHub call for a request that fails anyway
	}
	if _, err := s.github.Installation(ctx, n); err != nil {
		return req, err
	}
	req.installationID = strconv.FormatInt(n, 10)
	return req, nil
}

// applyGitHubLink links or unlinks as asked.
func (s *Server) applyGitHubLink(ctx context.Context, orgID string, req githubLinkRequest, at time.Time) (*kiln.Organization, error) {
	if req.unlink {
		return s.orgs.UnlinkGitHubInstallation(ctx, orgID, at)
	}
	return s.orgs.LinkGitHubInstallation(ctx, orgID, req.installationID, at)
}

// installState is the signed, expiring state of the GitHub install flow, bound to the
// organization and the admin who started it.
type installState struct {
	OrganizationID string `json:"o"`
	UserID         string `json:"u"`
	Expires        int64  `json:"e"`
	Nonce          string `json:"n"`
}

// installStateLifetime is how long an install link stays usable.
const installStateLifetime = 15 * time.Minute

func (s *Server) signState(st installState) string {
	payload, _ := json.Marshal(st)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(s.stateMAC(payload))
}

func (s *Server) stateMAC(payload []byte) []byte {
	m := hmac.New(sha256.New, s.stateKey)
	m.Write(payload)
	return m.Sum(nil)
}

func (s *Server) verifyState(raw string, now time.Time) (installState, error) {
	var st installState
	bad := fieldError("state", "is not a valid, unexpired install state of this service")
	payloadPart, macPart, ok := strings.Cut(raw, ".")
	if !ok {
		return st, bad
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(payloadPart)
	mac, err2 := enc.DecodeString(macPart)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.stateMAC(payload)) || json.Unmarshal(payload, &st) != nil {
		return st, bad
	}
	if now.Unix() > st.Expires {
		return st, bad
	}
	return st, nil
}

// useState records that the state's link was used, in the store until the state expires (so
// also across restarts): a state links at most once, however often its callback URL is
// replayed. It is called when every check has passed, right before linking, so a callback that
// fails earlier (a wrong code, a user who cannot see the installation) leaves the link usable.
func (s *Server) useState(ctx context.Context, st installState) error {
	err := s.once.UseOnce(ctx, st.OrganizationID, "github-install-state:"+st.Nonce, s.now(), time.Unix(st.Expires+1, 0))
	if kiln.IsCode(err, kiln.EConflict) {
		return fieldError("state", "was used already: an install link links once; start again from GET /integrations/github/install")
	}
	return err
}

// githubInstallLink answers GET /integrations/github/install (admin): the GitHub page that
// installs the App, carrying a signed state bound to the caller's organization.
func (s *Server) githubInstallLink(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if s.github == nil || !s.githubOAuth {
		return kiln.Errorf(kiln.EGitHubNotConnected, "this server has no GitHub App with an OAuth client configured (KILN_GITHUB_CLIENT_ID, KILN_GITHUB_CLIENT_SECRET)")
	}
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	expires := s.now().Add(installStateLifetime)
	state := s.signState(installState{OrganizationID: p.Organization.ID, UserID: p.Member.User.ID,
		Expires: expires.Unix(), Nonce: base64.RawURLEncoding.EncodeToString(nonce)})
	url, err := s.github.InstallURL(r.Context(), state)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"url": url, "expiresAt": timestamp(expires)})
	return nil
}

// githubInstallCallback answers GET /integrations/github/callback, where GitHub sends the
// installer back. The installation is linked only if the state is ours, still valid and not used
// before, and the installing user's own token can see the installation.
func (s *Server) githubInstallCallback(w http.ResponseWriter, r *http.Request) {
	if !s.rateLimit(w, r, "addr:"+clientAddr(r), s.now()) {
		return
	}
	if err := s.completeInstall(w, r); err != nil {
		writeError(w, r, err)
	}
}

func (s *Server) completeInstall(w http.ResponseWriter, r *http.Request) error {
	if s.github == nil || !s.githubOAuth {
		return kiln.Errorf(kiln.EGitHubNotConnected, "this server has no GitHub App with an OAuth client configured")
	}
	q := r.URL.Query()
	st, err := s.verifyState(q.Get("state"), s.now())
	if err != nil {
		return err
	}
	inst, err := strconv.ParseInt(q.Get("installation_id"), 10, 64)
	if err != nil || inst <= 0 {
		return fieldError("installation_id", "is required")
	}
	if q.Get("code") == "" {
		return fieldError("code", "is required")
	}
	ctx := r.Context()
	userToken, err := s.github.ExchangeCode(ctx, q.Get("code"))
	if err != nil {
		return err
	}
	ids, err := s.github.UserInstallationIDs(ctx, userToken)
	if err != nil {
		return err
	}
	if !slices.Contains(ids, inst) {
		return kiln.Errorf(kiln.EGitHubInstallationInvalid, "the GitHub user who installed the App cannot access installation %d", inst)
	}
	if _, err := s.github.Installation(ctx, inst); err != nil {
		return err
	}
	// The admin who started the flow must still be an admin of the organization.
	m, err := s.orgs.GetMember(ctx, st.OrganizationID, st.UserID)
	if err != nil {
		return fieldError("state", "belongs to a member who no longer exists")
	}
	if !m.Role.Allows(kiln.ActAdmin) {
		return kiln.Errorf(kiln.EInsufficientScope, "only an owner or admin may link GitHub")
	}
	if err := s.useState(ctx, st); err != nil {
		return err
	}
	org, err := s.orgs.LinkGitHubInstallation(ctx, st.OrganizationID, strconv.FormatInt(inst, 10), s.now().UTC().Truncate(time.Millisecond))
	if err != nil {
		return err
	}
	s.auth.ForgetOrganization(org.ID)
	s.recordAudit(r, &kiln.AuditEvent{ID: kiln.NewID(), OrganizationID: org.ID, At: s.now().UTC(), Kind: "github.linked",
		ActorKind: kiln.AuditActorMember, ActorID: m.User.ID, ActorName: m.User.Name, ActorEmail: m.User.Email,
		Address: clientAddr(r), Target: strconv.FormatInt(inst, 10), Details: map[string]string{"installationId": strconv.FormatInt(inst, 10)}})
	writeJSON(w, http.StatusOK, map[string]any{
		"message":             "GitHub is linked to " + org.Name + "; you can close this page.",
		"organizationId":      org.ID,
		"integrationSettings": renderOrganization(org).IntegrationSettings,
	})
	return nil
}
