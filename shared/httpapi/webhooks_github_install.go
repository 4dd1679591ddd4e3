package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// installationEvent is the part of GitHub's installation and installation_repositories events
// kiln reads.
type installationEvent struct {
	Action       string `json:"action"`
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	RepositoriesRemoved []struct {
		FullName string `json:"full_name"`
	} `json:"repositories_removed"`
}

// installationForgetter drops what the GitHub App client caches of an installation.
type installationForgetter interface {
	ForgetInstallation(installationID int64)
}

// githubInstallationEvent acts on the App's lifecycle. installation deleted unlinks the
// installation from its organization (its builds then fail with "GitHub App was uninstalled");
// suspend, unsuspend, new_permissions_accepted and installation_repositories drop what kiln
// caches of the installation, so the next build asks GitHub afresh and fails with a clear reason
// (suspended, repository removed) rather than a checkout error.
func (s *Server) githubInstallationEvent(w http.ResponseWriter, r *http.Request, event string, ev installationEvent) error {
	ctx := r.Context()
	if ev.Installation.ID <= 0 {
		return kiln.Errorf(kiln.EBadRequest, "the %s event names no installation", event)
	}
	if f, ok := s.github.(installationForgetter); ok {
		f.ForgetInstallation(ev.Installation.ID)
	}
	inst := strconv.FormatInt(ev.Installation.ID, 10)
	log := loggerOf(ctx).With(slog.String("delivery", r.Header.Get("X-GitHub-Delivery")), slog.String("event", event),
		slog.String("action", ev.Action), slog.String("installation_id", inst))
	org, err := s.orgs.GetOrganizationByInstallation(ctx, inst)
	if kiln.IsCode(err, kiln.ENotFound) {
		log.InfoContext(ctx, "github installation event for an installation no organization links")
		writeJSON(w, http.StatusOK, map[string]any{"message": "event " + event + " acknowledged; no organization links the installation", "builds": []string{}})
		return nil
	}
	if err != nil {
		return err
	}
	log = log.With(slog.String("org_id", org.ID))
	message := "event " + event + " " + ev.Action + " acknowledged"
	switch {
	case event == "installation" && ev.Action == "deleted":
		if _, err := s.orgs.UnlinkGitHubInstallation(ctx, org.ID, s.now()); err != nil {
			return err
		}
		message = "the installation was unlinked from its organization"
	case event == "installation_repositories":
		for _, repo := range ev.RepositoriesRemoved {
			log.InfoContext(ctx, "repository removed from the GitHub App installation", slog.String("repository", repo.FullName))
		}
	}
	log.InfoContext(ctx, "github installation event", slog.String("outcome", message))
	writeJSON(w, http.StatusOK, map[string]any{"message": message, "builds": []string{}})
	return nil
}
