package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// project loads a project of the caller's organization named by the {id} path value.
func (s *Server) project(r *http.Request, p *auth.Principal) (*kiln.Project, error) {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return nil, kiln.NotFound("project")
	}
	return s.projects.GetProject(r.Context(), p.Organization.ID, id)
}

// listProjects answers GET /projects.
func (s *Server) listProjects(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	f := store.ProjectFilter{}
	if v, ok := r.URL.Query()["sourceControl"]; ok {
		f.SourceControl = kiln.SourceControl(v[0])
		if !f.SourceControl.Valid() {
			return fieldError("sourceControl", "must be github or perforce")
		}
	}
	query := "projects?sourceControl=" + string(f.SourceControl)
	return writePage(s, w, r, p.Organization.ID, query, func(ctx context.Context, page store.Page) ([]*kiln.Project, string, error) {
		return s.projects.ListProjects(ctx, p.Organization.ID, f, page)
	}, renderProjectItem)
}

// getProject answers GET /projects/:id with its build settings and .uproject.
func (s *Server) getProject(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pr, err := s.project(r, p)
	if err != nil {
		return err
	}
	return s.writeProject(w, r, pr)
}

// writeProject answers with a project's detail and its build settings.
func (s *Server) writeProject(w http.ResponseWriter, r *http.Request, pr *kiln.Project) error {
	settings, err := s.projects.ListBuildSettings(r.Context(), pr.OrganizationID, pr.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderProject(pr, settings))
	return nil
}

type projectPatch struct {
	Name        Optional[string] `json:"name"`
	Description Optional[string] `json:"description"`
}

// patchProject answers PATCH /projects/:id: name and description only.
func (s *Server) patchProject(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pr, err := s.project(r, p)
	if err != nil {
		return err
	}
	var patch projectPatch
	if err := decodeBody(w, r, &patch, false); err != nil {
		return err
	}
	updated := *pr
	errs := kiln.FieldErrors{}
	if patch.Name.Set {
		if patch.Name.Null {
			errs.Add("name", "must not be null")
		}
		updated.Name = strings.TrimSpace(patch.Name.Value)
	}
	if patch.Description.Set {
		updated.Description = strings.TrimSpace(patch.Description.Value) // null clears
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if err := updated.Validate(); err != nil {
		return err
	}
	updated.UpdatedAt = s.now().UTC().Truncate(time.Millisecond)
	if err := s.projects.UpdateProject(r.Context(), &updated); err != nil {
		return err
	}
	return s.writeProject(w, r, &updated)
}

// deleteProject answers DELETE /projects/:id: the project, its settings and its build caches go,
// builds stay.
func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pr, err := s.project(r, p)
	if err != nil {
		return err
	}
	if err := s.projects.DeleteProject(r.Context(), p.Organization.ID, pr.ID); err != nil {
		return err
	}
	s.deleteProjectCaches(r.Context(), p.Organization.ID, pr.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// fieldError is a validation_failed error about one field.
func fieldError(field, problem string) error {
	return kiln.FieldError(kiln.EValidation, field+" "+problem, field, problem)
}
