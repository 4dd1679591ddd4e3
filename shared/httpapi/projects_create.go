package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/plans"
)

type addRepoRequest struct {
	Name           *string `json:"name"`
	Description    *string `json:"description"`
	InstallationID *string `json:"installationId"`
	RepoFullName   *string `json:"repoFullName"`
	DefaultBranch  *string `json:"defaultBranch"`
	UprojectPath   *string `json:"uprojectPath"`
}

// addRepo answers POST /projects/add-repo: a GitHub-backed project, with its .uproject found at
// uprojectPath or detected up to depth 3.
func (s *Server) addRepo(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var req addRepoRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	errs := kiln.FieldErrors{}
	name := strings.TrimSpace(deref(req.Name))
	kiln.ValidateName("name", name, errs)
	if req.InstallationID == nil || *req.InstallationID == "" {
		errs.Add("installationId", "is required")
	}
	repo := strings.TrimSpace(deref(req.RepoFullName))
	if !kiln.ValidRepoFullName(repo) {
		errs.Add("repoFullName", "is required and must be owner/repository")
	}
	branch := strings.TrimSpace(deref(req.DefaultBranch))
	if req.DefaultBranch != nil && !kiln.ValidBranch(branch) {
		errs.Add("defaultBranch", "must be a valid branch name")
	}
	uprojectPath := strings.TrimSpace(deref(req.UprojectPath))
	if req.UprojectPath != nil && !kiln.ValidUprojectPath(uprojectPath) {
		errs.Add("uprojectPath", "must be a relative path ending in .uproject")
	}
	if len([]rune(deref(req.Description))) > kiln.MaxDescriptionLength {
		errs.Add("description", "must be at most 2000 characters")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if err := s.planCheck(r.Context(), p.Organization.ID, func(pl *plans.Plans, org *kiln.Organization) error {
		return pl.CheckNewProject(r.Context(), org)
	}); err != nil {
		return err
	}
	inst, err := s.linkedInstallation(p, *req.InstallationID)
	if err != nil {
		return err
	}
	ctx := r.Context()
	info, err := s.github.Repo(ctx, inst, repo)
	if err != nil {
		return err
	}
	if branch == "" {
		branch = info.DefaultBranch
	}
	var uproject *kiln.UprojectInfo
	if uprojectPath != "" {
		uproject, err = s.github.ReadUproject(ctx, inst, info.FullName, branch, uprojectPath)
	} else {
		uproject, err = s.github.DetectUproject(ctx, inst, info.FullName, branch)
	}
	if err != nil {
		return err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	pr := &kiln.Project{
		ID: kiln.NewID(), OrganizationID: p.Organization.ID, Name: name,
		Description: strings.TrimSpace(deref(req.Description)), SourceControl: kiln.SourceGitHub,
		RepoLink: info.FullName, InstallationID: *req.InstallationID, DefaultBranch: branch,
		UprojectPath: uproject.Path, Uproject: uproject, CreatedAt: now, UpdatedAt: now,
	}
	if err := pr.Validate(); err != nil {
		return err
	}
	if err := s.createProject(ctx, pr); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, renderProject(pr, nil))
	return nil
}

type addPerforceRequest struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Depot       *string `json:"depot"`
	StreamPath  *string `json:"streamPath"`
	// DepotPath, instead of StreamPath: a classic depot path, //depot/Game/... .
	DepotPath    *string `json:"depotPath"`
	UprojectPath *string `json:"uprojectPath"`
}

// addPerforce answers POST /projects/add-perforce. The body is checked first; the project needs
// the organization's Perforce credentials, which the Perforce integration saves.
func (s *Server) addPerforce(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var req addPerforceRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	errs := kiln.FieldErrors{}
	kiln.ValidateName("name", strings.TrimSpace(deref(req.Name)), errs)
	root, classic := kiln.DepotPathRoot(deref(req.DepotPath))
	switch {
	case req.DepotPath != nil && req.StreamPath != nil:
		errs.Add("depotPath", "give a streamPath or a depotPath, not both")
	case req.DepotPath != nil && !classic:
		errs.Add("depotPath", "must be a classic depot path //<depot>/<dir>/... or //<depot>/<dir>/<dir>/...")
	case req.DepotPath == nil && !kiln.ValidDepotPath(deref(req.StreamPath)):
		errs.Add("streamPath", "is required (or depotPath) and must be a depot path //<depot>/<stream> or //<depot>/<stream>/<line>")
	}
	if classic && req.Depot == nil {
		depot := "//" + strings.Split(root[2:], "/")[0]
		req.Depot = &depot
	}
	if !classic && !kiln.ValidDepotPath(deref(req.Depot)) || classic && !strings.HasPrefix(root+"/", deref(req.Depot)+"/") {
		errs.Add("depot", "is required and must be a depot path //<depot>/<stream> (for a depotPath, optional: its depot)")
	}
	if req.UprojectPath != nil && !kiln.ValidUprojectPath(*req.UprojectPath) {
		errs.Add("uprojectPath", "must be a relative path ending in .uproject")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if err := s.planCheck(r.Context(), p.Organization.ID, func(pl *plans.Plans, org *kiln.Organization) error {
		if err := pl.CheckPerforce(org); err != nil {
			return err
		}
		return pl.CheckNewProject(r.Context(), org)
	}); err != nil {
		return err
	}
	cr, err := s.perforceCredentials(p.Organization)
	if err != nil {
		return err
	}
	stream := deref(req.StreamPath)
	if classic {
		stream = root
	}
	done, err := s.perforceCheck(w, p.Organization.ID)
	if err != nil {
		return err
	}
	uproject, err := s.perforce.ReadProject(r.Context(), p.Organization.ID, cr, stream, classic, deref(req.UprojectPath), github.ParseUproject)
	done(err)
	if err != nil {
		return err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	pr := &kiln.Project{
		ID: kiln.NewID(), OrganizationID: p.Organization.ID, Name: strings.TrimSpace(deref(req.Name)),
		Description: strings.TrimSpace(deref(req.Description)), SourceControl: kiln.SourcePerforce,
		RepoLink: stream, Depot: deref(req.Depot), StreamPath: stream, DepotPath: deref(req.DepotPath),
		UprojectPath: uproject.Path, Uproject: uproject, CreatedAt: now, UpdatedAt: now,
	}
	if err := pr.Validate(); err != nil {
		return err
	}
	if err := s.createProject(r.Context(), pr); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, renderProject(pr, nil))
	return nil
}

// createProject stores pr unless its organization (as stored now) has as many projects as its
// plan allows. The store counts and writes in one atomic step: it decides, not the early
// CheckNewProject, which requests made at the same moment may all pass.
func (s *Server) createProject(ctx context.Context, pr *kiln.Project) error {
	if s.plans == nil {
		return s.projects.CreateProject(ctx, pr, 0)
	}
	org, err := s.orgs.GetOrganization(ctx, pr.OrganizationID)
	if err != nil {
		return err
	}
	return s.plans.CreateProject(ctx, s.projectCreator, org, pr)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
