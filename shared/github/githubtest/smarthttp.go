package githubtest

import (
	"net/http"
	"net/http/cgi"
	"os/exec"
	"path/filepath"
	"strings"
)

// serveGit serves clones and fetches of /{owner}/{repo}.git/... over git's smart HTTP protocol
// with `git http-backend`. Like GitHub for a private repository it wants HTTP basic auth, user
// x-access-token and an installation token of the repository's installation as the password;
// anything else gets 401 with a Basic challenge. Pushes are refused.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	if len(parts) < 3 || !strings.HasSuffix(parts[1], ".git") {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	repo := s.repo(parts[0] + "/" + strings.TrimSuffix(parts[1], ".git"))
	if user, pass, ok := r.BasicAuth(); !ok || user != "x-access-token" || repo == nil || !s.tokenFor(pass, repo) {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token.", http.StatusUnauthorized)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack" {
		http.Error(w, "Permission to push denied.", http.StatusForbidden)
		return
	}
	backend, err := exec.LookPath("git")
	if err == nil {
		err = repo.ensure()
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	rel, _ := filepath.Rel(s.root, repo.Dir)
	r2 := r.Clone(r.Context())
	// The repository's directory keeps the case it was added with.
	r2.URL.Path = "/" + filepath.ToSlash(rel) + "/" + parts[2]
	h := &cgi.Handler{
		Path: backend,
		Args: []string{"http-backend"},
		Root: "/",
		Env: []string{
			"GIT_PROJECT_ROOT=" + s.root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=/dev/null",
			"HOME=" + s.root,
		},
		InheritEnv: []string{"PATH"},
	}
	h.ServeHTTP(w, r2)
}

// tokenFor reports whether an installation token is valid and its installation holds repo.
func (s *Server) tokenFor(tok string, repo *Repo) bool {
	id, ok := s.tokenInstallation(tok)
	return ok && id == repo.InstallationID
}
