package httpapi

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// buildFilter reads the filters of GET /builds; each is checked so a typo is an error, not an
// empty list.
func buildFilter(q url.Values) (store.BuildFilter, error) {
	f := store.BuildFilter{
		ProjectID: q.Get("projectId"), BuildSettingID: q.Get("buildSettingId"),
		Status: kiln.BuildStatus(q.Get("status")), Platform: kiln.Platform(q.Get("platform")),
		BuildType: kiln.BuildType(q.Get("buildType")), Branch: q.Get("branch"),
	}
	errs := kiln.FieldErrors{}
	if f.ProjectID != "" && !kiln.ValidID(f.ProjectID) {
		errs.Add("projectId", "is not a project id")
	}
	if f.BuildSettingID != "" && !kiln.ValidID(f.BuildSettingID) {
		errs.Add("buildSettingId", "is not a build setting id")
	}
	if f.Status != "" && !f.Status.Valid() {
		errs.Add("status", "must be one of pending, running, complete, failed, superseded")
	}
	if f.Platform != "" && !f.Platform.Valid() {
		errs.Add("platform", "must be one of Win64, Linux, LinuxArm64, Mac, Android, IOS")
	}
	if f.BuildType != "" && !f.BuildType.Valid() {
		errs.Add("buildType", "must be one of Development, Shipping, DebugGame, Test, Server")
	}
	return f, errs.Err()
}

// filterKey names a list with its filters, for binding cursors to the query.
func filterKey(list string, pairs ...string) string {
	var b strings.Builder
	b.WriteString(list)
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString("&" + pairs[i] + "=" + url.QueryEscape(pairs[i+1]))
	}
	return b.String()
}

// listBuilds answers GET /builds.
func (s *Server) listBuilds(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	f, err := buildFilter(r.URL.Query())
	if err != nil {
		return err
	}
	query := filterKey("builds", "projectId", f.ProjectID, "buildSettingId", f.BuildSettingID, "status", string(f.Status),
		"platform", string(f.Platform), "buildType", string(f.BuildType), "branch", f.Branch)
	page, err := s.parsePage(r, p.Organization.ID, query)
	if err != nil {
		return err
	}
	builds, next, err := s.history.ListBuilds(r.Context(), p.Organization.ID, f, page)
	if err != nil {
		return err
	}
	body := renderList(builds, s.cursors.encode(p.Organization.ID, query, next), renderBuild)
	if err := s.nameTriggers(r.Context(), p.Organization.ID, itemRefs(body.Items)...); err != nil {
		return err
	}
	if err := s.addProgress(r.Context(), p.Organization.ID, builds, itemRefs(body.Items)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// getBuild answers GET /builds/:id with the most recent log lines.
func (s *Server) getBuild(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return kiln.NotFound("build")
	}
	b, err := s.history.GetBuild(r.Context(), p.Organization.ID, id)
	if err != nil {
		return err
	}
	return s.writeBuildDetail(w, r, b)
}

var (
	commitRe     = regexp.MustCompile(`^[0-9a-fA-F]{4,40}$`)
	changelistRe = regexp.MustCompile(`^[1-9][0-9]{0,9}$`)
)

// triggerBuild answers POST /projects/:id/build-settings/:settingId/trigger: a pending build of
// the setting (named by its id or its readable name, see namedSetting), with optional overrides of branch and commit (GitHub) or changelist (Perforce).
// With an Idempotency-Key header, a repeat of the same request gives the same build (202 again)
// and a different request under the key is 422.
func (s *Server) triggerBuild(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pr, st, err := s.namedSetting(r, p)
	if err != nil {
		return err
	}
	raw, err := readBody(w, r)
	if err != nil {
		return err
	}
	var req api.TriggerRequest
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := decodeObject(raw, &req); err != nil {
			return err
		}
	}
	errs := kiln.FieldErrors{}
	if req.Branch != nil && (pr.SourceControl != kiln.SourceGitHub || !kiln.ValidBranch(*req.Branch)) {
		errs.Add("branch", "must be a branch name, for GitHub projects")
	}
	if req.Commit != nil && (pr.SourceControl != kiln.SourceGitHub || !commitRe.MatchString(*req.Commit)) {
		errs.Add("commit", "must be a commit sha, full or abbreviated (4 to 40 hex digits), for GitHub projects")
	}
	if req.Changelist != nil && (pr.SourceControl != kiln.SourcePerforce || !changelistRe.MatchString(*req.Changelist)) {
		errs.Add("changelist", "must be a changelist number, for Perforce projects")
	}
	key := r.Header.Get("Idempotency-Key")
	if !builds.ValidClientKey(key) {
		errs.Add("Idempotency-Key", "must be at most 255 characters on one line")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	treq := builds.TriggerRequest{Project: pr, Setting: st, Branch: deref(req.Branch), Commit: strings.ToLower(deref(req.Commit)),
		Changelist: deref(req.Changelist), Clean: req.Clean != nil && *req.Clean, TriggeredBy: p.UserRef(), ClientKey: builds.ClientKey{UserID: p.Member.User.ID, Key: key}}
	b, _, err := s.builds.Trigger(r.Context(), treq)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, api.TriggerAccepted{
		BuildID: b.ID, Number: nullable(b.Number), ProjectID: b.ProjectID, BuildSettingID: b.BuildSettingID, Status: string(b.Status),
	})
	return nil
}

// listArtifacts answers GET /projects/:id/artifacts, newest first, optionally by branch, commit
// or build setting.
func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pr, err := s.project(r, p)
	if err != nil {
		return err
	}
	projectID := pr.ID
	q := r.URL.Query()
	f := store.ArtifactFilter{BuildSettingID: q.Get("buildSettingId"), Branch: q.Get("branch"), Commit: q.Get("commit")}
	if f.BuildSettingID != "" && !kiln.ValidID(f.BuildSettingID) {
		return fieldError("buildSettingId", "is not a build setting id")
	}
	query := filterKey("artifacts", "projectId", projectID, "buildSettingId", f.BuildSettingID, "branch", f.Branch, "commit", f.Commit)
	page, err := s.parsePage(r, p.Organization.ID, query)
	if err != nil {
		return err
	}
	arts, next, err := s.history.ListArtifacts(r.Context(), p.Organization.ID, projectID, f, page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderList(arts, s.cursors.encode(p.Organization.ID, query, next), renderArtifact))
	return nil
}
