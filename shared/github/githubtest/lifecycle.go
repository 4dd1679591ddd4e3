package githubtest

import "strings"

// SuspendInstallation suspends an installation (or lifts it with false): GitHub then shows its
// suspended_at, refuses new tokens (403) and the ones it issued.
func (s *Server) SuspendInstallation(id int64, suspended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.insts[id]; in != nil {
		in.suspended = suspended
	}
}

// RemoveInstallation uninstalls the App from an account: GitHub forgets the installation and
// its tokens.
func (s *Server) RemoveInstallation(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.insts, id)
	for tok, it := range s.tokens {
		if it.installationID == id {
			delete(s.tokens, tok)
		}
	}
}

// RemoveRepo takes a repository out of its installation, as an owner does in the App's
// settings: the installation's tokens no longer see it.
func (s *Server) RemoveRepo(fullName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[strings.ToLower(fullName)]; r != nil {
		r.InstallationID = 0
	}
}

// suspended reports whether an installation is suspended; the caller holds s.mu.
func (s *Server) suspendedLocked(id int64) bool {
	in := s.insts[id]
	return in != nil && in.suspended
}
