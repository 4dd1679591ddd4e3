package agentapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
)

// hostRunPrefix starts the Host of a build whose host reported the CodeBuild build running it,
// so that stopping the build can stop that CodeBuild build too.
const hostRunPrefix = "codebuild:"

// start records what runs the build and answers the job, with source credentials minted now. A
// build reserved for its host (a CodeBuild host, see builds.Lifecycle.ReserveHost) waited
// pending until now: the host's start makes it running, and its startedAt is this moment. A
// host may ask again (a retried call): it gets new credentials, and its run id cannot change.
func (s *Server) start(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	if b.Status != kiln.StatusPending || b.Host == "" {
		if err := running(b); err != nil {
			return err
		}
	}
	var in StartRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.HostRunID != "" && !validRunID(in.HostRunID) {
		return invalid("hostRunId", "must be the CodeBuild build id: up to 255 of A-Z a-z 0-9 : . _ -")
	}
	if b.Status == kiln.StatusPending {
		runs := ""
		if in.HostRunID != "" {
			runs = hostRunPrefix + in.HostRunID
		}
		started, err := s.Lifecycle.StartOnHost(r.Context(), b.OrganizationID, b.ID, b.Host, runs)
		if err != nil {
			return err
		}
		b = started
	}
	if in.HostRunID != "" {
		host := hostRunPrefix + in.HostRunID
		switch {
		case b.Host == host:
		case strings.HasPrefix(b.Host, hostRunPrefix):
			return kiln.Errorf(kiln.EConflict, "the build already runs on another host run")
		default:
			updated, err := s.Lifecycle.Progress(r.Context(), b.OrganizationID, b.ID, func(cur *kiln.Build) {
				if !strings.HasPrefix(cur.Host, hostRunPrefix) {
					cur.Host = host
				}
			})
			if err != nil {
				return err
			}
			if updated.Host != host {
				return kiln.Errorf(kiln.EConflict, "the build already runs on another host run")
			}
			b = updated
		}
	}
	job, err := s.job(r.Context(), b)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, job)
	return nil
}

func validRunID(id string) bool {
	if len(id) > 255 {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// job gathers the build's job. What makes the build impossible to run (a deleted project, no
// source credentials) is the job's Failure, which the host fails the build with.
func (s *Server) job(ctx context.Context, b *kiln.Build) (*Job, error) {
	job := &Job{
		Build: JobBuild{ID: b.ID, OrganizationID: b.OrganizationID, ProjectID: b.ProjectID, BuildSettingID: b.BuildSettingID,
			Platform: string(b.Platform), BuildType: string(b.BuildType), Branch: b.Branch, Commit: b.Commit,
			Changelist: b.Changelist, UEVersion: b.UEVersion, Clean: b.Clean},
		MaxLogLines: s.MaxLogLines, ArtifactMaxBytes: s.ArtifactMax,
		BuildCache: s.Caches != nil && (s.Uploads != nil || s.Artifacts != nil),
	}
	p, err := s.Store.GetProject(ctx, b.OrganizationID, b.ProjectID)
	if kiln.IsCode(err, kiln.ENotFound) {
		job.Failure = "the project was deleted before the build ran"
		return job, nil
	} else if err != nil {
		return nil, err
	}
	st, err := s.Store.GetBuildSetting(ctx, b.OrganizationID, b.ProjectID, b.BuildSettingID)
	if kiln.IsCode(err, kiln.ENotFound) {
		job.Failure = "the build setting was deleted before the build ran"
		return job, nil
	} else if err != nil {
		return nil, err
	}
	job.Project = JobProject{ID: p.ID, Name: p.Name, SourceControl: string(p.SourceControl), RepoLink: p.RepoLink, StreamPath: p.StreamPath, DepotPath: p.DepotPath}
	job.UprojectPath = st.UprojectPath
	if job.UprojectPath == "" {
		job.UprojectPath = p.UprojectPath
	}
	job.TimeLimitSeconds = int64(st.TimeLimit(s.TimeLimit).Seconds())
	org, err := s.Store.GetOrganization(ctx, b.OrganizationID)
	if err != nil {
		return nil, err
	}
	if p.SourceControl == kiln.SourcePerforce {
		job.Perforce, job.Failure, err = s.perforceJob(ctx, org)
	} else {
		job.Git, job.Failure, err = s.gitJob(ctx, org, p)
	}
	if err != nil {
		return nil, err
	}
	return job, nil
}

// gitJob mints the build's own GitHub token: limited to the project's repository, read only.
func (s *Server) gitJob(ctx context.Context, org *kiln.Organization, p *kiln.Project) (*GitJob, string, error) {
	if s.GitHub == nil || org.Integrations.GitHubInstallationID == "" || org.Integrations.GitHubInstallationID != p.InstallationID {
		return nil, "GitHub App was uninstalled or unlinked: GitHub is not connected to the organization; link the GitHub App installation again, then trigger a new build", nil
	}
	inst, err := strconv.ParseInt(p.InstallationID, 10, 64)
	if err != nil {
		return nil, "the project's GitHub installation id is not valid", nil
	}
	cloneURL, err := s.GitHub.CloneURL(ctx, inst, p.RepoLink)
	if err == nil {
		var g GitJob
		g.Token, g.ExpiresAt, err = s.GitHub.HostToken(ctx, inst, p.RepoLink)
		if err == nil {
			g.CloneURL = cloneURL
			return &g, "", nil
		}
	}
	var ke *kiln.Error
	if code := kiln.ErrorCode(err); (code == kiln.EGitHubInstallationInvalid || code == kiln.ERepoNotAccessible) && errors.As(err, &ke) {
		return nil, ke.Message, nil // uninstalled, suspended, repository removed: said plainly
	} else if code != kiln.EInternal {
		return nil, fmt.Sprintf("cannot reach the repository %s on GitHub (%s)", p.RepoLink, code), nil
	}
	return nil, "", err
}

// perforceJob hands on the organization's saved Perforce login. Perforce has no way to mint a
// ticket for one build without the user's password, so the saved ticket itself goes to the host
// (docs/hosts.md says so); it lives as long as the customer made it. With a saved password the
// host gets kiln's own ticket, renewed first (RenewPerforce), never the password.
func (s *Server) perforceJob(ctx context.Context, org *kiln.Organization) (*PerforceJob, string, error) {
	if s.OpenSealed == nil {
		return nil, "Perforce is not available to build hosts of this service", nil
	}
	cr, err := perforce.SavedCredentials(org, s.OpenSealed)
	if kiln.IsCode(err, kiln.EPerforceNotConfigured) {
		return nil, fmt.Sprintf("Perforce is not configured for the organization: save its credentials (PATCH /organizations/%s/perforce), then trigger a new build", org.ID), nil
	}
	if err != nil {
		return nil, "", err
	}
	if cr.Password != "" && s.RenewPerforce != nil {
		// A ticket kiln logs in for: renewed here when it is due, or expired, before a host is
		// given it.
		// login -s asks the server itself: a ticket it says expired is renewed now, not on the host.
		c, err := s.RenewPerforce.Connect(ctx, org)
		if err == nil {
			err = c.LoginStatus(ctx)
		}
		if err != nil {
			return nil, fmt.Sprintf("cannot log in to the organization's Perforce server: %s", kiln.ErrorMessage(err)), nil
		}
		cr.Ticket = c.CurrentTicket()
	}
	return &PerforceJob{ServerURL: cr.ServerURL, UserName: cr.UserName, Ticket: cr.Ticket, Fingerprint: cr.Fingerprint}, "", nil
}
