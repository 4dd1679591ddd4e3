package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

type projectDefaultsBody struct {
	Platform         *string `json:"platform"`
	BuildType        *string `json:"buildType"`
	UEVersion        *string `json:"ueVersion"`
	Trigger          *string `json:"trigger"`
	NotifyOnComplete *bool   `json:"notifyOnComplete"`
}

type githubIntegrationBody struct {
	InstallationID string `json:"installationId"`
}

type integrationsBody struct {
	GitHub *githubIntegrationBody `json:"github"`
}

type organizationBody struct {
	api.OrganizationSummary
	DefaultProjectSettings projectDefaultsBody `json:"defaultProjectSettings"`
	IntegrationSettings    integrationsBody    `json:"integrationSettings"`
	// Perforce is null until the organization saves Perforce credentials.
	Perforce  *perforceBody `json:"perforce"`
	CreatedAt string        `json:"createdAt"`
	UpdatedAt string        `json:"updatedAt"`
}

type perforceBody struct {
	ServerURL string `json:"serverUrl"`
	UserName  string `json:"userName"`
	TicketSet bool   `json:"ticketSet"`
	// Authentication is ticket (the customer's) or password (kiln logs in and renews its ticket,
	// which expires at TicketExpiresAt).
	Authentication  string  `json:"authentication"`
	TicketExpiresAt *string `json:"ticketExpiresAt"`
}

func renderOrganization(o *kiln.Organization) organizationBody {
	d := o.DefaultProjectSettings
	body := organizationBody{
		OrganizationSummary: orgSummary(o),
		DefaultProjectSettings: projectDefaultsBody{
			Platform: nullable(string(d.Platform)), BuildType: nullable(string(d.BuildType)),
			UEVersion: nullable(d.UEVersion), Trigger: nullable(string(d.Trigger)),
			NotifyOnComplete: d.NotifyOnComplete,
		},
		CreatedAt: timestamp(o.CreatedAt),
		UpdatedAt: timestamp(o.UpdatedAt),
	}
	if pf := o.Perforce; pf != nil {
		body.Perforce = &perforceBody{ServerURL: pf.ServerURL, UserName: pf.UserName, TicketSet: len(pf.Ticket) > 0, Authentication: "ticket"}
		if pf.Password != nil {
			body.Perforce.Authentication = "password"
			if !pf.TicketExpiresAt.IsZero() {
				at := timestamp(pf.TicketExpiresAt)
				body.Perforce.TicketExpiresAt = &at
			}
		}
	}
	if id := o.Integrations.GitHubInstallationID; id != "" {
		body.IntegrationSettings.GitHub = &githubIntegrationBody{InstallationID: id}
	}
	return body
}

// ownOrganization returns the caller's organization if the path names it; any other id is
// not_found, whether or not it exists.
func ownOrganization(r *http.Request, p *auth.Principal) (*kiln.Organization, error) {
	if r.PathValue("id") != p.Organization.ID {
		return nil, kiln.NotFound("organization")
	}
	return p.Organization, nil
}

// getOrganization answers GET /organizations/:id.
func (s *Server) getOrganization(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderOrganization(org))
	return nil
}

type projectDefaultsPatch struct {
	Platform         Optional[string] `json:"platform"`
	BuildType        Optional[string] `json:"buildType"`
	UEVersion        Optional[string] `json:"ueVersion"`
	Trigger          Optional[string] `json:"trigger"`
	NotifyOnComplete Optional[bool]   `json:"notifyOnComplete"`
}

type organizationPatch struct {
	Name                   Optional[string]               `json:"name"`
	DefaultProjectSettings Optional[projectDefaultsPatch] `json:"defaultProjectSettings"`
	IntegrationSettings    Optional[integrationsPatch]    `json:"integrationSettings"`
}

// patchOrganization answers PATCH /organizations/:id: name and defaultProjectSettings (each
// default: a value sets it, null clears it, absent leaves it).
func (s *Server) patchOrganization(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	var patch organizationPatch
	if err := decodeBody(w, r, &patch, false); err != nil {
		return err
	}
	updated := *org
	errs := kiln.FieldErrors{}
	if patch.Name.Set {
		if patch.Name.Null {
			errs.Add("name", "must not be null")
		}
		updated.Name = strings.TrimSpace(patch.Name.Value)
	}
	if d := patch.DefaultProjectSettings; d.Set {
		if d.Null {
			updated.DefaultProjectSettings = kiln.ProjectDefaults{}
		} else {
			applyDefaultsPatch(&updated.DefaultProjectSettings, d.Value)
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if err := updated.Validate(); err != nil {
		return err
	}
	link, err := s.checkGitHubLink(r.Context(), patch.IntegrationSettings, errs)
	if err != nil {
		return err
	}
	if err := errs.Err(); err != nil {
		return err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	if link.set {
		// Linking can still be refused (installation in use), so it goes first.
		linked, err := s.applyGitHubLink(r.Context(), org.ID, link, now)
		if err != nil {
			return err
		}
		updated.Integrations = linked.Integrations
	}
	if patch.Name.Set || patch.DefaultProjectSettings.Set {
		updated.UpdatedAt = now
		if err := s.orgs.UpdateOrganization(r.Context(), &updated); err != nil {
			return err
		}
	}
	if link.set {
		updated.UpdatedAt = now
	}
	s.auth.ForgetOrganization(org.ID)
	writeJSON(w, http.StatusOK, renderOrganization(&updated))
	return nil
}

func applyDefaultsPatch(d *kiln.ProjectDefaults, p projectDefaultsPatch) {
	if p.Platform.Set {
		d.Platform = kiln.Platform(p.Platform.Value)
	}
	if p.BuildType.Set {
		d.BuildType = kiln.BuildType(p.BuildType.Value)
	}
	if p.UEVersion.Set {
		d.UEVersion = p.UEVersion.Value
	}
	if p.Trigger.Set {
		d.Trigger = kiln.Trigger(p.Trigger.Value)
	}
	if p.NotifyOnComplete.Set {
		if p.NotifyOnComplete.Null {
			d.NotifyOnComplete = nil
		} else {
			v := p.NotifyOnComplete.Value
			d.NotifyOnComplete = &v
		}
	}
}

// unlinkGitHub answers DELETE /organizations/:id/integrations/github.
func (s *Server) unlinkGitHub(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	if _, err := s.orgs.UnlinkGitHubInstallation(r.Context(), org.ID, s.now().UTC().Truncate(time.Millisecond)); err != nil {
		return err
	}
	s.auth.ForgetOrganization(org.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
