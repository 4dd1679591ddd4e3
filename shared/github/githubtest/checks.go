package githubtest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"
)

// Routes of GitHub's Checks API.
const (
	RouteCreateCheckRun = "POST /repos/{owner}/{repo}/check-runs"
	RouteUpdateCheckRun = "PATCH /repos/{owner}/{repo}/check-runs/{id}"
	RouteListCheckRuns  = "GET /repos/{owner}/{repo}/commits/{ref}/check-runs"
)

// maxAnnotationsPerRequest is GitHub's limit: more in one request is 422.
const maxAnnotationsPerRequest = 50

// CheckRun is a check run as the fake holds it: what was created, then updated.
type CheckRun struct {
	ID                     int64
	Repo, HeadSHA, Name    string
	Status, Conclusion     string
	DetailsURL, ExternalID string
	Title, Summary         string
	Annotations            []github.CheckRunAnnotation
	// Updates counts the PATCHes it took.
	Updates int
}

var shaRe = regexp.MustCompile(`^[0-9a-f]{40}$`)

// GrantChecks makes an installation grant the App "Checks: read and write" (installations start
// without it).
func (s *Server) GrantChecks(installationID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.insts[installationID]; in != nil {
		in.checks = true
	}
}

// CheckRuns returns the check runs created so far, oldest first, as they are now.
func (s *Server) CheckRuns() []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CheckRun, 0, len(s.checkRuns))
	for _, c := range s.checkRuns {
		cp := *c
		cp.Annotations = append([]github.CheckRunAnnotation(nil), c.Annotations...)
		out = append(out, cp)
	}
	return out
}

// checksAllowed answers 403 as GitHub does for an installation without checks: write.
func (s *Server) checksAllowed(w http.ResponseWriter, repo *Repo) bool {
	s.mu.Lock()
	in := s.insts[repo.InstallationID]
	ok := in != nil && in.checks
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
	}
	return ok
}

func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request) {
	repo, ok := s.authRepo(w, r)
	if !ok || !s.checksAllowed(w, repo) {
		return
	}
	var in github.CreateCheckRunOptions
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	if in.Name == "" || !shaRe.MatchString(in.HeadSHA) {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed: name and head_sha are required")
		return
	}
	if _, err := repo.commit(in.HeadSHA); err != nil {
		writeError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+in.HeadSHA)
		return
	}
	run := &CheckRun{Repo: repo.FullName, HeadSHA: in.HeadSHA, Name: in.Name, Status: "queued"}
	if msg := applyCheckRun(run, in.Status, in.Conclusion, in.CompletedAt != nil, in.DetailsURL, in.ExternalID, in.Output); msg != "" {
		writeError(w, http.StatusUnprocessableEntity, msg)
		return
	}
	s.mu.Lock()
	run.ID = s.newID()
	s.checkRuns = append(s.checkRuns, run)
	out := s.checkRunJSON(run)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) updateCheckRun(w http.ResponseWriter, r *http.Request) {
	repo, ok := s.authRepo(w, r)
	if !ok || !s.checksAllowed(w, repo) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in github.UpdateCheckRunOptions
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var run *CheckRun
	for _, c := range s.checkRuns {
		if c.ID == id && strings.EqualFold(c.Repo, repo.FullName) {
			run = c
		}
	}
	if run == nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	next := *run
	next.Annotations = append([]github.CheckRunAnnotation(nil), run.Annotations...)
	if in.Name != "" {
		next.Name = in.Name
	}
	if msg := applyCheckRun(&next, in.Status, in.Conclusion, in.CompletedAt != nil, in.DetailsURL, in.ExternalID, in.Output); msg != "" {
		writeError(w, http.StatusUnprocessableEntity, msg)
		return
	}
	next.Updates++
	*run = next
	writeJSON(w, http.StatusOK, s.checkRunJSON(run))
}

// applyCheckRun checks a create or update request as GitHub does and applies it to run; it
// returns the validation message of a request GitHub refuses, leaving run as it was.
func applyCheckRun(run *CheckRun, status, conclusion *string, completedAt bool, detailsURL, externalID *string, out *github.CheckRunOutput) string {
	next := *run
	if status != nil {
		switch *status {
		case "queued", "in_progress", "completed":
			next.Status = *status
		default:
			return "Validation Failed: status must be queued, in_progress or completed"
		}
	}
	if conclusion != nil {
		switch *conclusion {
		case "success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required":
			next.Conclusion, next.Status = *conclusion, "completed" // a conclusion completes the run
		default:
			return "Validation Failed: conclusion is not one GitHub knows"
		}
	}
	if next.Status == "completed" && next.Conclusion == "" {
		return "Validation Failed: conclusion is required when status is completed"
	}
	if conclusion != nil && !completedAt {
		return "Validation Failed: completed_at is required with a conclusion"
	}
	if detailsURL != nil {
		next.DetailsURL = *detailsURL
	}
	if externalID != nil {
		next.ExternalID = *externalID
	}
	if out != nil {
		if out.GetTitle() == "" || out.GetSummary() == "" {
			return "Validation Failed: output.title and output.summary are required"
		}
		if len(out.Annotations) > maxAnnotationsPerRequest {
			return "Validation Failed: only 50 annotations are allowed per request"
		}
		for _, a := range out.Annotations {
			if a.GetPath() == "" || a.GetStartLine() < 1 || a.GetEndLine() < a.GetStartLine() || a.GetMessage() == "" {
				return "Validation Failed: an annotation needs path, start_line, end_line and message"
			}
			switch a.GetAnnotationLevel() {
			case "notice", "warning", "failure":
			default:
				return "Validation Failed: annotation_level must be notice, warning or failure"
			}
			if (a.StartColumn != nil || a.EndColumn != nil) && a.GetStartLine() != a.GetEndLine() {
				return "Validation Failed: columns are only allowed on one line"
			}
			next.Annotations = append(next.Annotations, *a)
		}
		next.Title, next.Summary = out.GetTitle(), out.GetSummary()
	}
	*run = next
	return ""
}

func (s *Server) listCheckRuns(w http.ResponseWriter, r *http.Request) {
	repo, ok := s.authRepo(w, r)
	if !ok || !s.checksAllowed(w, repo) {
		return
	}
	sha := r.PathValue("ref")
	if c, err := repo.commit(sha); err == nil {
		sha = c.SHA
	}
	name, app := r.URL.Query().Get("check_name"), r.URL.Query().Get("app_id")
	s.mu.Lock()
	var all []*github.CheckRun
	for _, c := range s.checkRuns {
		if strings.EqualFold(c.Repo, repo.FullName) && c.HeadSHA == sha && (name == "" || c.Name == name) &&
			(app == "" || app == strconv.FormatInt(s.AppID, 10)) {
			all = append(all, s.checkRunJSON(c))
		}
	}
	s.mu.Unlock()
	lo, hi := page(w, r, len(all))
	writeJSON(w, http.StatusOK, &github.ListCheckRunsResults{Total: github.Int(len(all)), CheckRuns: append([]*github.CheckRun{}, all[lo:hi]...)})
}

// checkRunJSON is a check run as GitHub shows it; the caller holds s.mu.
func (s *Server) checkRunJSON(c *CheckRun) *github.CheckRun {
	out := &github.CheckRun{ID: github.Int64(c.ID), HeadSHA: github.String(c.HeadSHA), Name: github.String(c.Name),
		Status: github.String(c.Status), ExternalID: github.String(c.ExternalID), DetailsURL: github.String(c.DetailsURL),
		App:    &github.App{ID: github.Int64(s.AppID), Slug: github.String(s.AppSlug)},
		Output: &github.CheckRunOutput{Title: github.String(c.Title), Summary: github.String(c.Summary), AnnotationsCount: github.Int(len(c.Annotations))}}
	if c.Conclusion != "" {
		out.Conclusion = github.String(c.Conclusion)
	}
	return out
}
