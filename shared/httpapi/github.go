package httpapi

import (
	"net/http"
	"strconv"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// linkedInstallation checks that id is the GitHub installation linked to the caller's
// organization, and returns it as GitHub's number.
func (s *Server) linkedInstallation(p *auth.Principal, id string) (int64, error) {
	linked := p.Organization.Integrations.GitHubInstallationID
	if s.github == nil || linked == "" {
		return 0, kiln.Errorf(kiln.EGitHubNotConnected, "the organization has no GitHub App installation linked")
	}
	if id != linked {
		return 0, kiln.NotFound("installation")
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return 0, kiln.NotFound("installation")
	}
	return n, nil
}

type repoItemBody struct {
	ID               int64  `json:"id"`
	FullName         string `json:"fullName"`
	Private          bool   `json:"private"`
	DefaultBranch    string `json:"defaultBranch"`
	UprojectDetected bool   `json:"uprojectDetected"`
}

// listGitHubRepos answers GET /github/repos/:installationId.
func (s *Server) listGitHubRepos(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	inst, err := s.linkedInstallation(p, r.PathValue("installationId"))
	if err != nil {
		return err
	}
	query := "github-repos:" + r.PathValue("installationId")
	page, err := s.parsePage(r, p.Organization.ID, query)
	if err != nil {
		return err
	}
	repos, next, err := s.github.Repos(r.Context(), inst, page.After, page.Limit)
	if err != nil {
		return err
	}
	body := api.List[repoItemBody]{Items: make([]repoItemBody, 0, len(repos)), NextCursor: s.cursors.encode(p.Organization.ID, query, next)}
	for _, repo := range repos {
		body.Items = append(body.Items, repoItemBody{ID: repo.ID, FullName: repo.FullName, Private: repo.Private,
			DefaultBranch: repo.DefaultBranch, UprojectDetected: repo.UprojectDetected})
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

type branchCommitBody struct {
	SHA     string `json:"sha"`
	Message string `json:"message"`
	Author  string `json:"author"`
}

type branchItemBody struct {
	Name      string           `json:"name"`
	Commit    branchCommitBody `json:"commit"`
	IsDefault bool             `json:"isDefault"`
}

// repoQuery reads the required repoFullName query parameter.
func repoQuery(r *http.Request) (string, error) {
	repo := r.URL.Query().Get("repoFullName")
	if !kiln.ValidRepoFullName(repo) {
		return "", fieldError("repoFullName", "is required and must be owner/repository")
	}
	return repo, nil
}

// listGitHubBranches answers GET /github/branches/:installationId?repoFullName&q.
func (s *Server) listGitHubBranches(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	repo, err := repoQuery(r)
	if err != nil {
		return err
	}
	inst, err := s.linkedInstallation(p, r.PathValue("installationId"))
	if err != nil {
		return err
	}
	q := r.URL.Query().Get("q")
	query := "github-branches:" + r.PathValue("installationId") + ":" + repo + "?q=" + q
	page, err := s.parsePage(r, p.Organization.ID, query)
	if err != nil {
		return err
	}
	branches, next, err := s.github.Branches(r.Context(), inst, repo, q, page.After, page.Limit)
	if err != nil {
		return err
	}
	body := api.List[branchItemBody]{Items: make([]branchItemBody, 0, len(branches)), NextCursor: s.cursors.encode(p.Organization.ID, query, next)}
	for _, b := range branches {
		body.Items = append(body.Items, branchItemBody{Name: b.Name, IsDefault: b.IsDefault,
			Commit: branchCommitBody{SHA: b.Commit.SHA, Message: b.Commit.Message, Author: b.Commit.Author}})
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// detectGitHubUproject answers GET /github/uproject/:installationId?repoFullName&branch.
func (s *Server) detectGitHubUproject(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	repo, err := repoQuery(r)
	if err != nil {
		return err
	}
	branch := r.URL.Query().Get("branch")
	if branch != "" && !kiln.ValidBranch(branch) {
		return fieldError("branch", "must be a valid branch name")
	}
	inst, err := s.linkedInstallation(p, r.PathValue("installationId"))
	if err != nil {
		return err
	}
	info, err := s.github.DetectUproject(r.Context(), inst, repo, branch)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderUproject(info))
	return nil
}

// installationBody is the linked installation as GitHub describes it.
type installationBody struct {
	ID                  int64  `json:"id"`
	Account             string `json:"account"`
	AccountType         string `json:"accountType"`
	RepositorySelection string `json:"repositorySelection"`
	Suspended           bool   `json:"suspended"`
}

// getGitHubInstallation answers GET /github/installations/:installationId: the linked
// installation's account (the login of the GitHub user or organization it is installed on), so
// that "Linked to installation 123" can name it.
func (s *Server) getGitHubInstallation(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	inst, err := s.linkedInstallation(p, r.PathValue("installationId"))
	if err != nil {
		return err
	}
	in, err := s.github.Installation(r.Context(), inst)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, installationBody{ID: in.ID, Account: in.Account, AccountType: in.AccountType,
		RepositorySelection: in.RepositorySelection, Suspended: in.Suspended})
	return nil
}
