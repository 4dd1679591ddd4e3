package httpapi

import (
	"context"
	"net/http"
	"sort"
	"strconv"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/manifest"
)

// The build size report: a complete build's manifest (its artifact's files and their sizes) and
// the difference between two builds' manifests.

// Size-diff limits: how many changed files one answer lists by default and at most.
const (
	DefaultSizeDiffLimit = 100
	MaxSizeDiffLimit     = 1000
)

type manifestItemBody struct {
	Path      string `json:"path"`
	SizeBytes int64  `json:"sizeBytes"`
}

type manifestPageBody struct {
	Items      []manifestItemBody `json:"items"`
	NextCursor *string            `json:"nextCursor"`
}

// getManifest answers GET /builds/:id/manifest?cursor&limit: the artifact's files, sorted by path.
func (s *Server) getManifest(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	orgID, id := p.Organization.ID, r.PathValue("id")
	query := "manifest:" + id
	page, err := s.parsePage(r, orgID, query)
	if err != nil {
		return err
	}
	files, err := s.buildManifest(r.Context(), orgID, id, "build")
	if err != nil {
		return err
	}
	from := sort.Search(len(files), func(i int) bool { return files[i].Path > page.After })
	to := min(len(files), from+page.Limit)
	body := manifestPageBody{Items: make([]manifestItemBody, 0, to-from)}
	for _, f := range files[from:to] {
		body.Items = append(body.Items, manifestItemBody{Path: f.Path, SizeBytes: f.Size})
	}
	if to < len(files) {
		body.NextCursor = s.cursors.encode(orgID, query, files[to-1].Path)
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

type sizeChangeBody struct {
	Path       string `json:"path"`
	Change     string `json:"change"`
	BaseBytes  int64  `json:"baseBytes"`
	Bytes      int64  `json:"bytes"`
	DeltaBytes int64  `json:"deltaBytes"`
}

type sizeDiffBody struct {
	BuildID      string           `json:"buildId"`
	BaseBuildID  string           `json:"baseBuildId"`
	BaseBytes    int64            `json:"baseBytes"`
	Bytes        int64            `json:"bytes"`
	DeltaBytes   int64            `json:"deltaBytes"`
	BaseFiles    int              `json:"baseFiles"`
	Files        int              `json:"files"`
	ChangedFiles int              `json:"changedFiles"`
	Items        []sizeChangeBody `json:"items"`
}

// getSizeDiff answers GET /builds/:id/size-diff?base=<buildId>&limit: the files that grew,
// shrank, appeared or vanished since the base build, largest absolute change first (the first
// limit of them; changedFiles counts them all), with the totals of both builds.
func (s *Server) getSizeDiff(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	orgID, id := p.Organization.ID, r.PathValue("id")
	q := r.URL.Query()
	baseID := q.Get("base")
	if baseID == "" {
		return fieldError("base", "is required: the id of the build to compare with")
	}
	limit := DefaultSizeDiffLimit
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n <= 0 {
			return fieldError("limit", "must be a positive whole number (at most 1000)")
		}
		limit = min(n, MaxSizeDiffLimit)
	}
	head, err := s.buildManifest(r.Context(), orgID, id, "build")
	if err != nil {
		return err
	}
	base, err := s.buildManifest(r.Context(), orgID, baseID, "base build")
	if err != nil {
		return err
	}
	d := manifest.Compare(base, head)
	body := sizeDiffBody{
		BuildID: id, BaseBuildID: baseID, BaseBytes: d.BaseBytes, Bytes: d.Bytes, DeltaBytes: d.Bytes - d.BaseBytes,
		BaseFiles: d.BaseFiles, Files: d.Files, ChangedFiles: len(d.Changes),
		Items: make([]sizeChangeBody, 0, min(limit, len(d.Changes))),
	}
	for _, c := range d.Changes[:min(limit, len(d.Changes))] {
		body.Items = append(body.Items, sizeChangeBody{Path: c.Path, Change: c.Kind, BaseBytes: c.BaseBytes, Bytes: c.Bytes, DeltaBytes: c.Delta()})
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// buildManifest reads the manifest of the organization's build id. A build of another
// organization is not_found; one that has not completed is invalid_state; a complete one without
// a manifest (built before kiln recorded them, or its artifact deleted by retention) is
// not_found with a message that says so.
func (s *Server) buildManifest(ctx context.Context, orgID, id, what string) ([]manifest.Entry, error) {
	if !kiln.ValidID(id) {
		return nil, kiln.Errorf(kiln.ENotFound, "%s %s not found", what, id)
	}
	b, err := s.history.GetBuild(ctx, orgID, id)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, kiln.Errorf(kiln.ENotFound, "%s %s not found", what, id)
	} else if err != nil {
		return nil, err
	}
	if b.Status != kiln.StatusComplete {
		return nil, kiln.Errorf(kiln.EInvalidState, "%s %s is %s: only a complete build has a size report", what, id, b.Status)
	}
	a, err := s.history.GetArtifact(ctx, orgID, id)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, kiln.Errorf(kiln.ENotFound, "%s %s has no size report: its artifact was deleted by retention", what, id)
	} else if err != nil {
		return nil, err
	}
	f, err := s.artifacts.Open(ctx, manifest.Key(a.Key))
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, kiln.Errorf(kiln.ENotFound, "%s %s has no size report: it completed before kiln recorded the files of artifacts, or its file list could not be stored", what, id)
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	return manifest.Read(f) // an unreadable manifest is internal: logged, masked
}
