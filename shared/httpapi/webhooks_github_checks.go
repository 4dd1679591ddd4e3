package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// checkEvent is the part of GitHub's check_run and check_suite events kiln reads.
type checkEvent struct {
	Action   string `json:"action"`
	CheckRun struct {
		ExternalID string `json:"external_id"`
	} `json:"check_run"`
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Sender struct {
		Login string `json:"login"`
	} `json:"sender"`
}

// decodeCheck reads a check_run or check_suite event, keeping only the fields of checkEvent.
func decodeCheck(r io.Reader) (checkEvent, error) {
	var ev checkEvent
	err := decodeFields(r, map[string]any{"action": &ev.Action, "check_run": &ev.CheckRun,
		"installation": &ev.Installation, "sender": &ev.Sender})
	return ev, err
}

// githubLoginRe matches a GitHub login, a bot's too ("name[bot]").
var githubLoginRe = regexp.MustCompile(`^[-0-9A-Za-z_\[\]]{1,64}$`)

// triggeredByGitHub is the TriggeredBy of a build a GitHub user asked for on GitHub (the "Re-run"
// of a check run): "github:<login>".
const triggeredByGitHub = "github:"

// githubCheckEvent acts on check_run rerequested, GitHub's "Re-run" of one of kiln's check runs:
// the build the run is of (its external id) is re-run, triggered by the GitHub user who asked.
// A redelivery of the event starts nothing new (the delivery id is the idempotency key). Other
// actions, and check_suite events ("Re-run all checks" of a suite, which would need the builds of
// a commit), are acknowledged and do nothing.
func (s *Server) githubCheckEvent(w http.ResponseWriter, r *http.Request, event string, ev checkEvent) error {
	ctx := r.Context()
	if event != "check_run" || ev.Action != "rerequested" {
		writeJSON(w, http.StatusOK, map[string]any{"message": "event " + event + " " + ev.Action + " acknowledged; kiln re-runs check_run rerequested", "builds": []string{}})
		return nil
	}
	buildID := ev.CheckRun.ExternalID
	if ev.Installation.ID <= 0 || !kiln.ValidID(buildID) || !githubLoginRe.MatchString(ev.Sender.Login) {
		return kiln.Errorf(kiln.EBadRequest, "the check_run event names no installation, kiln build or sender")
	}
	delivery := r.Header.Get("X-GitHub-Delivery")
	log := loggerOf(ctx).With(slog.String("delivery", delivery), slog.String("event", event), slog.String("build_id", buildID),
		slog.String("sender", ev.Sender.Login))
	org, err := s.orgs.GetOrganizationByInstallation(ctx, strconv.FormatInt(ev.Installation.ID, 10))
	if kiln.IsCode(err, kiln.ENotFound) {
		log.InfoContext(ctx, "check_run rerequested for an installation no organization links")
		writeJSON(w, http.StatusOK, map[string]any{"message": "event check_run acknowledged; no organization links the installation", "builds": []string{}})
		return nil
	}
	if err != nil {
		return err
	}
	by := triggeredByGitHub + ev.Sender.Login
	key := "github-check-run:" + delivery
	if delivery == "" || !builds.ValidClientKey(key) {
		key = "" // no key: nothing to tell a redelivery by
	}
	b, created, err := s.builds.Rerun(ctx, builds.RerunRequest{OrganizationID: org.ID, BuildID: buildID, TriggeredBy: by,
		ClientKey: builds.ClientKey{UserID: by, Key: key}})
	if err != nil {
		return err
	}
	log.InfoContext(ctx, "check_run rerequested: build re-run", slog.String("org_id", org.ID), slog.String("rerun_id", b.ID), slog.Bool("created", created))
	started := []string{}
	if created {
		started = append(started, b.ID)
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"builds": started})
	return nil
}
