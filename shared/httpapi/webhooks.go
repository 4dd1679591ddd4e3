package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// pushEvent is the part of GitHub's push event kiln reads.
type pushEvent struct {
	Ref     string `json:"ref"`
	After   string `json:"after"`
	Deleted bool   `json:"deleted"`
	Repo    struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
}

// githubWebhook answers POST /webhooks/github: pushes start the builds of the settings with
// trigger push on the pushed branch; check_run rerequested re-runs the check run's build. The body must be signed with the webhook secret
// (X-Hub-Signature-256); a push seen before (pushKey) is acknowledged and starts nothing.
func (s *Server) githubWebhook(w http.ResponseWriter, r *http.Request) {
	if err := s.handleGitHubWebhook(w, r); err != nil {
		writeError(w, r, err)
	}
}

func (s *Server) handleGitHubWebhook(w http.ResponseWriter, r *http.Request) error {
	body, err := s.readSignedWebhook(w, r)
	if err != nil || body == nil {
		return err
	}
	event := r.Header.Get("X-GitHub-Event")
	if event == "installation" || event == "installation_repositories" {
		if body.decodeErr != nil {
			return kiln.Errorf(kiln.EBadRequest, "the %s event is not valid JSON", event)
		}
		return s.githubInstallationEvent(w, r, event, body.install)
	}
	if event == "check_run" || event == "check_suite" {
		if body.decodeErr != nil {
			return kiln.Errorf(kiln.EBadRequest, "the %s event is not valid JSON", event)
		}
		return s.githubCheckEvent(w, r, event, body.check)
	}
	if event != "push" {
		writeJSON(w, http.StatusOK, map[string]any{"message": "event " + event + " acknowledged; kiln acts on push events", "builds": []string{}})
		return nil
	}
	if body.decodeErr != nil {
		return kiln.Errorf(kiln.EBadRequest, "the push event is not valid JSON")
	}
	ctx := r.Context()
	loggerOf(ctx).InfoContext(ctx, "github push", slog.String("delivery", r.Header.Get("X-GitHub-Delivery")),
		slog.String("repository", body.push.Repo.FullName), slog.String("ref", body.push.Ref), slog.String("after", body.push.After))
	started, err := s.buildsForPush(r, body.push)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"builds": started})
	return nil
}

// buildsForPush triggers the push settings of the pushed branch in every project of the
// installation's organization that links the repository. Each build is keyed by the push
// (pushKey), so a redelivery or a replay starts nothing new.
func (s *Server) buildsForPush(r *http.Request, ev pushEvent) ([]string, error) {
	ctx := r.Context()
	branch, isBranch := strings.CutPrefix(ev.Ref, "refs/heads/")
	if !isBranch || ev.Deleted || strings.Trim(ev.After, "0") == "" || !commitRe.MatchString(ev.After) {
		return []string{}, nil // tags, deleted branches: nothing to build
	}
	org, err := s.orgs.GetOrganizationByInstallation(ctx, strconv.FormatInt(ev.Installation.ID, 10))
	if kiln.IsCode(err, kiln.ENotFound) {
		return []string{}, nil // not linked to any organization
	}
	if err != nil {
		return nil, err
	}
	linksRepo := func(p *kiln.Project) bool { return strings.EqualFold(p.RepoLink, ev.Repo.FullName) }
	return s.triggerPushSettings(ctx, org.ID, kiln.SourceGitHub, linksRepo, func(st *kiln.BuildSetting) *builds.TriggerRequest {
		if st.Branch != branch {
			return nil
		}
		return &builds.TriggerRequest{Commit: ev.After, TriggeredBy: "push:" + ev.After,
			IdempotencyKey: pushKey(ev, st.ID), Fingerprint: ev.After}
	})
}

// pushKey is the idempotency key of the build a push starts for one setting. It is made of what
// the push says (repository, ref, after) rather than of the delivery id: a redelivery and a
// replay of a recorded delivery under a new id both name the same build, so neither starts
// another.
func pushKey(ev pushEvent, settingID string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(ev.Repo.FullName) + "\x00" + ev.Ref + "\x00" + ev.After))
	return "github-push:" + hex.EncodeToString(sum[:]) + ":" + settingID
}

// triggerPushSettings starts a build of every setting with trigger push, in the organization's
// projects of one source control that wantProject accepts (nil: all), for which request returns a
// request (nil skips the setting; Project and Setting are filled in). It returns the ids of the builds it created; a setting
// whose build fails to start is logged and skipped, so one bad setting does not stop the others.
func (s *Server) triggerPushSettings(ctx context.Context, orgID string, source kiln.SourceControl,
	wantProject func(*kiln.Project) bool, request func(*kiln.BuildSetting) *builds.TriggerRequest) ([]string, error) {
	started := []string{}
	page := store.Page{Limit: store.MaxLimit}
	for {
		projects, next, err := s.projects.ListProjects(ctx, orgID, store.ProjectFilter{SourceControl: source}, page)
		if err != nil {
			return nil, err
		}
		for _, p := range projects {
			if wantProject != nil && !wantProject(p) {
				continue
			}
			settings, err := s.projects.ListBuildSettings(ctx, orgID, p.ID)
			if err != nil {
				return nil, err
			}
			for _, st := range settings {
				if st.Trigger != kiln.TriggerPush {
					continue
				}
				req := request(st)
				if req == nil {
					continue
				}
				req.Project, req.Setting = p, st
				b, created, err := s.builds.Trigger(ctx, *req)
				if kiln.IsCode(err, kiln.EPlanLimitReached) {
					continue // skipped for the plan, and recorded
				}
				if err != nil {
					loggerOf(ctx).ErrorContext(ctx, "push build", slog.String("setting_id", st.ID), slog.String("error", err.Error()))
					continue
				}
				if created {
					started = append(started, b.ID)
				}
			}
		}
		if next == "" {
			return started, nil
		}
		page.After = next
	}
}
