package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/console"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// signInCallbackPath is the console page GitHub sends a person back to after sign-in: the
// console checks the state it made and trades the code for a session (POST /auth/github/session).
// The GitHub App's callback URLs must include it.
const signInCallbackPath = console.Prefix + "signin/github"

type signInMethodsBody struct {
	GitHub bool `json:"github"`
	Token  bool `json:"token"`
	// GitHubLink says how an organization links GitHub here: "install" (GitHub's install flow),
	// "id" (by installation id: a GitHub App without an OAuth client) or "none" (no GitHub App).
	GitHubLink string `json:"githubLink"`
}

// getSignInMethods answers GET /auth/methods, without a token: how the console may sign in, and
// how it may link GitHub (so that it offers no link the server refuses).
func (s *Server) getSignInMethods(w http.ResponseWriter, r *http.Request) {
	link := "none"
	switch {
	case s.github != nil && s.githubOAuth:
		link = "install"
	case s.github != nil:
		link = "id"
	}
	writeJSON(w, http.StatusOK, signInMethodsBody{GitHub: s.signIn != nil, Token: true, GitHubLink: link})
}

// errSignInOff answers the sign-in routes where GitHub sign-in is off.
func errSignInOff() error {
	return kiln.Errorf(kiln.ENotFound, "GitHub sign-in is off on this service (KILN_SIGNUP); sign in with an API token")
}

// validState reports whether the console's state is a URL-safe random string of sensible length.
func validState(s string) bool {
	if len(s) < 16 || len(s) > 128 {
		return false
	}
	return strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == ""
}

// startGitHubSignIn answers GET /auth/github/signin?state=…, without a token: a redirect to
// GitHub's authorization page. The console made state and keeps it, so that only the browser
// that started a sign-in can finish it.
func (s *Server) startGitHubSignIn(w http.ResponseWriter, r *http.Request) {
	if s.signIn == nil {
		writeError(w, r, errSignInOff())
		return
	}
	state := r.URL.Query().Get("state")
	if !validState(state) {
		writeError(w, r, fieldError("state", "must be 16 to 128 letters, digits, - or _, made by the console"))
		return
	}
	to, err := s.signIn.SignInURL(state, strings.TrimSuffix(s.publicURL, "/")+signInCallbackPath)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusFound)
}

type createSessionRequest struct {
	Code string `json:"code"`
}

type createdSessionBody struct {
	Token   string      `json:"token"`
	Session api.Session `json:"session"`
}

// createSession answers POST /auth/github/session, without a token: the code GitHub sent back is
// traded for the person's GitHub identity, whose first sign-in makes their kiln user, and a
// console session is made, its secret shown in this answer only. The session acts for the user's
// first organization, if any. Every attempt takes from the client address's budget.
func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	if !s.rateLimit(w, r, "addr:"+clientAddr(r), now) {
		return
	}
	if err := s.signInWithGitHub(w, r); err != nil {
		writeError(w, r, err)
	}
}

func (s *Server) signInWithGitHub(w http.ResponseWriter, r *http.Request) error {
	if s.signIn == nil {
		return errSignInOff()
	}
	var req createSessionRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	if req.Code == "" || len(req.Code) > 256 {
		return fieldError("code", "is required: the code GitHub sent back to the console")
	}
	ctx := r.Context()
	userToken, err := s.signIn.ExchangeCode(ctx, req.Code)
	if err != nil {
		return err
	}
	gh, err := s.signIn.SignedInUser(ctx, userToken)
	if err != nil {
		return err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	u, err := s.users.SignInGitHubUser(ctx, &kiln.GitHubUser{
		User:     kiln.User{ID: kiln.NewID(), Email: gh.Email, Name: gh.Name, CreatedAt: now},
		GitHubID: gh.ID, Login: gh.Login,
	})
	if err != nil {
		return err
	}
	memberships, err := s.users.ListMemberships(ctx, u.ID)
	if err != nil {
		return err
	}
	orgID := ""
	if len(memberships) > 0 {
		orgID = memberships[0].OrganizationID
	}
	secret, sess := auth.NewSession(u.ID, orgID, r.UserAgent(), clientAddr(r), now)
	if err := s.users.CreateSession(ctx, sess); err != nil {
		return err
	}
	s.logger.InfoContext(ctx, "signed in with GitHub", "user", u.ID, "github_id", u.GitHubID, "session", sess.ID)
	writeJSON(w, http.StatusCreated, createdSessionBody{Token: secret, Session: renderSession(sess, sess.ID)})
	return nil
}
