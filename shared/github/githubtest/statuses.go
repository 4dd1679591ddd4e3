package githubtest

import (
	"encoding/json"
	"net/http"

	"github.com/google/go-github/v62/github"
)

// RouteStatuses is GitHub's "create a commit status".
const RouteStatuses = "POST /repos/{owner}/{repo}/statuses/{sha}"

// Status is a commit status the fake received.
type Status struct {
	Repo, SHA                              string
	State, Context, Description, TargetURL string
}

// GrantStatuses makes an installation grant the App "Commit statuses: read and write" (installations
// start without it).
func (s *Server) GrantStatuses(installationID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.insts[installationID]; in != nil {
		in.statuses = true
	}
}

// Statuses returns the commit statuses received so far, oldest first.
func (s *Server) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Status(nil), s.statuses...)
}

func (s *Server) createStatus(w http.ResponseWriter, r *http.Request) {
	repo, ok := s.authRepo(w, r)
	if !ok {
		return
	}
	var in github.RepoStatus
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	switch in.GetState() {
	case "pending", "success", "failure", "error":
	default:
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	s.mu.Lock()
	granted := s.insts[repo.InstallationID] != nil && s.insts[repo.InstallationID].statuses
	if granted {
		s.statuses = append(s.statuses, Status{Repo: repo.FullName, SHA: r.PathValue("sha"), State: in.GetState(),
			Context: in.GetContext(), Description: in.GetDescription(), TargetURL: in.GetTargetURL()})
	}
	s.mu.Unlock()
	if !granted {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	in.ID = github.Int64(s.newIDLocked())
	writeJSON(w, http.StatusCreated, &in)
}
