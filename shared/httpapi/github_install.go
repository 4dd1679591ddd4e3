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

// installState is the signed, expiring state of the GitHub install flow, bound to the
// organization and the admin who started it, and to the browser they started it in (Browser is
// the hash of the secret in that browser's install cookie).
type installState struct {
	OrganizationID string `json:"o"`
	UserID         string `json:"u"`
	Expires        int64  `json:"e"`
	Nonce          string `json:"n"`
	Browser        string `json:"b"`
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
	if now.Unix() > st.Expires || st.Browser == "" {
		return st, bad
	}
	return st, nil
}

// useState records that the state's link was used, in the store until the state expires (so
// also across restarts): a state links at most once, however often its callback URL is
// replayed. It is called when every check has passed, right before linking, so a callback that
// fails earlier (a wrong code, another browser, a user who cannot see the installation) leaves
// the link usable.
func (s *Server) useState(ctx context.Context, st installState) error {
	err := s.once.UseOnce(ctx, st.OrganizationID, "github-install-state:"+st.Nonce, s.now(), time.Unix(st.Expires+1, 0))
	if kiln.IsCode(err, kiln.EConflict) {
		return fieldError("state", "was used already: an install link links once; start again from GET /integrations/github/install")
	}
	return err
}

// githubInstallLink answers GET /integrations/github/install (admin): the GitHub page that
// installs the App, carrying a signed state bound to the caller's organization, the caller, and
// this browser, whose install cookie it sets.
func (s *Server) githubInstallLink(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if s.github == nil || !s.githubOAuth {
		return kiln.Errorf(kiln.EGitHubNotConnected, "this server has no GitHub App with an OAuth client configured (KILN_GITHUB_CLIENT_ID, KILN_GITHUB_CLIENT_SECRET)")
	}
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	secret, browser := newInstallBrowser()
	expires := s.now().Add(installStateLifetime)
	state := s.signState(installState{OrganizationID: p.Organization.ID, UserID: p.Member.User.ID,
		Expires: expires.Unix(), Nonce: base64.RawURLEncoding.EncodeToString(nonce), Browser: browser})
	url, err := s.github.InstallURL(r.Context(), state)
	if err != nil {
		return err
	}
	s.setInstallCookie(w, r, secret)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]string{"url": url, "expiresAt": timestamp(expires)})
	return nil
}

// githubInstallCallback answers GET /integrations/github/callback, where GitHub sends the
// installer back: a page leading back to the console (JSON for a client that asks for it).
func (s *Server) githubInstallCallback(w http.ResponseWriter, r *http.Request) {
	answer := installAnswer{json: wantsJSON(r), console: s.consolePath("organization")}
	if err := s.overLimit(w, "addr:"+clientAddr(r), s.now()); err != nil {
		answer.failed(w, r, err)
		return
	}
	org, err := s.completeInstall(r)
	if err != nil {
		answer.failed(w, r, err)
		return
	}
	s.clearInstallCookie(w, r)
	answer.linked(w, org)
}

// completeInstall links the installation only if the state is ours, still valid and not used
// before; it comes back to the browser that asked for it; the GitHub account that installed is
// the starting admin's own (where they sign in with GitHub) and can see the installation; and
// that admin is still an owner or admin.
func (s *Server) completeInstall(r *http.Request) (*kiln.Organization, error) {
	if s.github == nil || !s.githubOAuth {
		return nil, kiln.Errorf(kiln.EGitHubNotConnected, "this server has no GitHub App with an OAuth client configured")
	}
	q := r.URL.Query()
	st, err := s.verifyState(q.Get("state"), s.now())
	if err != nil {
		return nil, err
	}
	if err := checkInstallBrowser(r, st); err != nil {
		return nil, err
	}
	inst, err := strconv.ParseInt(q.Get("installation_id"), 10, 64)
	if err != nil || inst <= 0 {
		return nil, fieldError("installation_id", "is required")
	}
	if q.Get("code") == "" {
		return nil, fieldError("code", "is required")
	}
	ctx := r.Context()
	userToken, err := s.github.ExchangeCode(ctx, q.Get("code"))
	if err != nil {
		return nil, err
	}
	if err := s.checkInstaller(ctx, st.UserID, userToken); err != nil {
		return nil, err
	}
	ids, err := s.github.UserInstallationIDs(ctx, userToken)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(ids, inst) {
		return nil, kiln.Errorf(kiln.EGitHubInstallationInvalid, "the GitHub user who installed the App cannot access installation %d", inst)
	}
	if _, err := s.github.Installation(ctx, inst); err != nil {
		return nil, err
	}
	// The admin who started the flow must still be an admin of the organization.
	m, err := s.orgs.GetMember(ctx, st.OrganizationID, st.UserID)
	if err != nil {
		return nil, fieldError("state", "belongs to a member who no longer exists")
	}
	if !m.Role.Allows(kiln.ActAdmin) {
		return nil, kiln.Errorf(kiln.EInsufficientScope, "only an owner or admin may link GitHub")
	}
	if err := s.useState(ctx, st); err != nil {
		return nil, err
	}
	org, err := s.orgs.LinkGitHubInstallation(ctx, st.OrganizationID, strconv.FormatInt(inst, 10), s.now().UTC().Truncate(time.Millisecond))
	if err != nil {
		return nil, err
	}
	s.auth.ForgetOrganization(org.ID)
	s.recordAudit(r, &kiln.AuditEvent{ID: kiln.NewID(), OrganizationID: org.ID, At: s.now().UTC(), Kind: "github.linked",
		ActorKind: kiln.AuditActorMember, ActorID: m.User.ID, ActorName: m.User.Name, ActorEmail: m.User.Email,
		Address: clientAddr(r), Target: strconv.FormatInt(inst, 10), Details: map[string]string{"installationId": strconv.FormatInt(inst, 10)}})
	return org, nil
}
