package httpapi

import (
	"net/http"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// routes lists every endpoint with the action its caller's role must allow.
func (s *Server) routes() {
	s.mux.HandleFunc("/", s.notFound)

	s.handle("/auth/me", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.getMe),
	})
	s.handle("/auth/tokens", methods{
		http.MethodGet:  s.authed(kiln.ActRead, s.listTokens),
		http.MethodPost: s.authed(kiln.ActRead, s.createToken),
	})
	s.handle("/auth/tokens/{id}", methods{
		http.MethodDelete: s.authed(kiln.ActRead, s.deleteToken),
	})
	s.handle("/organizations/{id}", methods{
		http.MethodGet:   s.authed(kiln.ActRead, s.getOrganization),
		http.MethodPatch: s.authed(kiln.ActAdmin, s.patchOrganization),
	})
	s.handle("/organizations/{id}/integrations/github", methods{
		http.MethodDelete: s.authed(kiln.ActAdmin, s.unlinkGitHub),
	})
}
