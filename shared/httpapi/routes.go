package httpapi

import (
	"net/http"

	"github.com/kilnbuild/kiln/shared/console"
	"github.com/kilnbuild/kiln/shared/httpapi/openapi"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// routes lists every endpoint with the action its caller's role must allow.
func (s *Server) routes() {
	s.mux.HandleFunc("/", s.notFound)
	s.handle("/openapi.json", methods{http.MethodGet: openapi.Handler()})
	s.handle(console.Prefix, methods{http.MethodGet: console.MustNew()})

	s.handle("/auth/me", methods{
		http.MethodGet: s.signedIn(s.getMe),
	})
	s.handle("/auth/methods", methods{
		http.MethodGet: http.HandlerFunc(s.getSignInMethods),
	})
	s.handle("/auth/github/signin", methods{
		http.MethodGet: http.HandlerFunc(s.startGitHubSignIn),
	})
	s.handle("/auth/github/session", methods{
		http.MethodPost: http.HandlerFunc(s.createSession),
	})
	s.handle("/auth/sessions", methods{
		http.MethodGet: s.signedIn(s.listSessions),
	})
	s.handle("/auth/sessions/{id}", methods{
		http.MethodDelete: s.signedIn(s.deleteSession),
	})
	s.handle("/auth/session/organization", methods{
		http.MethodPut: s.signedIn(s.switchOrganization),
	})
	s.handle("/organizations", methods{
		http.MethodPost: s.signedIn(s.createOrganization),
	})
	s.handle("/auth/tokens", methods{
		http.MethodGet:  s.authed(kiln.ActRead, s.listTokens),
		http.MethodPost: s.audited("token.created", kiln.ActRead, s.createToken),
	})
	s.handle("/auth/tokens/{id}", methods{
		http.MethodDelete: s.audited("token.revoked", kiln.ActRead, s.deleteToken),
	})
	s.handle("/organizations/{id}", methods{
		http.MethodGet:   s.authed(kiln.ActRead, s.getOrganization),
		http.MethodPatch: s.audited("organization.updated", kiln.ActAdmin, s.patchOrganization),
	})
	s.handle("/organizations/{id}/usage", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.getUsage),
	})
	s.handle("/organizations/{id}/audit-log", methods{
		http.MethodGet: s.authed(kiln.ActAdmin, s.listAuditLog),
	})
	s.handle("/organizations/{id}/members", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.listMembers),
	})
	s.handle("/organizations/{id}/members/{userId}", methods{
		http.MethodPatch:  s.audited("member.role_changed", kiln.ActAdmin, s.patchMember),
		http.MethodDelete: s.audited("member.removed", kiln.ActAdmin, s.removeMember),
	})
	s.handle("/organizations/{id}/invitations", methods{
		http.MethodGet:  s.authed(kiln.ActAdmin, s.listInvitations),
		http.MethodPost: s.audited("invitation.created", kiln.ActAdmin, s.createInvitation),
	})
	s.handle("/organizations/{id}/invitations/{invitationId}", methods{
		http.MethodDelete: s.audited("invitation.revoked", kiln.ActAdmin, s.revokeInvitation),
	})
	s.handle("/invitations/accept", methods{
		http.MethodPost: http.HandlerFunc(s.acceptInvitation),
	})
	s.handle("/invitations/preview", methods{
		http.MethodPost: http.HandlerFunc(s.previewInvitation),
	})
	s.handle("/organizations/{id}/membership", methods{
		http.MethodDelete: s.audited("member.left", kiln.ActRead, s.leaveOrganization),
	})
	s.handle("/organizations/{id}/integrations/github", methods{
		http.MethodDelete: s.audited("github.unlinked", kiln.ActAdmin, s.unlinkGitHub),
	})
	s.handle("/organizations/{id}/perforce", methods{
		http.MethodPatch:  s.audited("perforce.saved", kiln.ActAdmin, s.putPerforce),
		http.MethodDelete: s.audited("perforce.removed", kiln.ActAdmin, s.deletePerforce),
	})
	s.handle("/organizations/{id}/perforce/trigger-tokens", methods{
		http.MethodGet:  s.authed(kiln.ActAdmin, s.listTriggerTokens),
		http.MethodPost: s.audited("perforce.trigger_token_created", kiln.ActAdmin, s.createTriggerToken),
	})
	s.handle("/organizations/{id}/agents", methods{
		http.MethodGet:  s.authed(kiln.ActAdmin, s.listAgents),
		http.MethodPost: s.audited("agent.created", kiln.ActAdmin, s.createAgent),
	})
	s.handle("/organizations/{id}/agents/{agentId}", methods{
		http.MethodDelete: s.audited("agent.revoked", kiln.ActAdmin, s.revokeAgent),
	})
	s.handle("/organizations/{id}/perforce/trigger-tokens/{tokenId}", methods{
		http.MethodDelete: s.audited("perforce.trigger_token_revoked", kiln.ActAdmin, s.deleteTriggerToken),
	})
	s.handle("/organizations/{id}/webhooks", methods{
		http.MethodGet:  s.authed(kiln.ActAdmin, s.listWebhooks),
		http.MethodPost: s.audited("webhook.created", kiln.ActAdmin, s.createWebhook),
	})
	s.handle("/organizations/{id}/webhooks/{webhookId}", methods{
		http.MethodGet:    s.authed(kiln.ActAdmin, s.getWebhook),
		http.MethodPatch:  s.audited("webhook.updated", kiln.ActAdmin, s.patchWebhook),
		http.MethodDelete: s.audited("webhook.deleted", kiln.ActAdmin, s.deleteWebhook),
	})
	s.handle("/organizations/{id}/webhooks/{webhookId}/deliveries", methods{
		http.MethodGet: s.authed(kiln.ActAdmin, s.listWebhookDeliveries),
	})
	s.handle("/organizations/{id}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver", methods{
		http.MethodPost: s.authed(kiln.ActAdmin, s.redeliverWebhook),
	})
	s.handle("/integrations/github/install", methods{
		http.MethodGet: s.authed(kiln.ActAdmin, s.githubInstallLink),
	})
	s.handle("/integrations/github/callback", methods{
		http.MethodGet: http.HandlerFunc(s.githubInstallCallback),
	})

	s.handle("/github/installations/{installationId}", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.getGitHubInstallation),
	})
	s.handle("/github/repos/{installationId}", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.listGitHubRepos),
	})
	s.handle("/github/branches/{installationId}", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.listGitHubBranches),
	})
	s.handle("/github/uproject/{installationId}", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.detectGitHubUproject),
	})

	s.handle("/projects", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.listProjects),
	})
	s.handle("/projects/add-repo", methods{
		http.MethodPost: s.audited("project.created", kiln.ActWrite, s.addRepo),
	})
	s.handle("/projects/add-perforce", methods{
		http.MethodPost: s.audited("project.created", kiln.ActWrite, s.addPerforce),
	})
	s.handle("/projects/{id}", methods{
		http.MethodGet:    s.authed(kiln.ActRead, s.getProject),
		http.MethodPatch:  s.audited("project.updated", kiln.ActWrite, s.patchProject),
		http.MethodDelete: s.audited("project.deleted", kiln.ActWrite, s.deleteProject),
	})
	s.handle("/projects/{id}/artifacts", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.listArtifacts),
	})
	s.handle("/projects/{id}/build-settings", methods{
		http.MethodGet:  s.authed(kiln.ActRead, s.listBuildSettings),
		http.MethodPost: s.audited("build_setting.created", kiln.ActWrite, s.createBuildSetting),
	})
	s.handle("/projects/{id}/build-settings/{settingId}", methods{
		http.MethodGet:    s.authed(kiln.ActRead, s.getBuildSetting),
		http.MethodPatch:  s.audited("build_setting.updated", kiln.ActWrite, s.patchBuildSetting),
		http.MethodDelete: s.audited("build_setting.deleted", kiln.ActWrite, s.deleteBuildSetting),
	})
	s.handle("/projects/{id}/build-settings/{settingId}/trigger", methods{
		http.MethodPost: s.authed(kiln.ActWrite, s.triggerBuild),
	})

	s.handle("/builds", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.listBuilds),
	})
	s.handle("/builds/{id}", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.getBuild),
	})
	s.handle("/builds/{id}/cancel", methods{
		http.MethodPost: s.authed(kiln.ActWrite, s.cancelBuild),
	})
	s.handle("/builds/{id}/rerun", methods{
		http.MethodPost: s.authed(kiln.ActWrite, s.rerunBuild),
	})
	s.handle("/builds/{id}/deploy", methods{
		http.MethodPost: s.authed(kiln.ActWrite, s.deployBuild),
	})
	s.handle("/builds/{id}/logs", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.getBuildLogs),
	})
	s.handle("/builds/{id}/download", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.getDownload),
	})
	s.handle("/builds/{id}/manifest", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.getManifest),
	})
	s.handle("/builds/{id}/size-diff", methods{
		http.MethodGet: s.authed(kiln.ActRead, s.getSizeDiff),
	})
	s.handle("/downloads/{org}/{file}", methods{
		http.MethodGet: http.HandlerFunc(s.serveDownload),
	})
	s.handle("/webhooks/github", methods{
		http.MethodPost: http.HandlerFunc(s.githubWebhook),
	})
	s.handle("/webhooks/perforce", methods{
		http.MethodPost: http.HandlerFunc(s.perforceWebhook),
	})
}
