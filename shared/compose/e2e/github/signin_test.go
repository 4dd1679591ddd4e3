package github

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestGitHubSignInTeamFlow is a new studio's first day through the API: Ada signs in with GitHub
// (her first sign-in makes her kiln user), creates an organization, links the GitHub App and
// invites Grace; Eve, signed in with another email, cannot use Grace's link; Grace signs in,
// accepts and builds; Ada demotes and then removes her, and Grace's token and session stop
// working at once. Every change is in the audit log with its actor. It runs on kiln serve and,
// on aws-local.
func TestGitHubSignInTeamFlow(t *testing.T) { e2e.Both(t, gitHubSignInTeamFlow) }

func gitHubSignInTeamFlow(t *testing.T, dep e2e.Deployment) {
	w := e2e.SignUpWorld(t, dep)
	if r := w.Do(t, "GET", "/auth/methods", "", nil); r.Body["github"] != true {
		t.Fatalf("sign-in methods: %s", r.Raw)
	}

	// Ada's first sign-in: a user with her verified primary email, in no organization yet.
	ada := e2e.SignIn(t, w, "ada")
	me := w.Do(t, "GET", "/auth/me", ada, nil)
	if e2e.Field(t, me.Body, "user", "email") != "ada@studio.example" || e2e.Field(t, me.Body, "user", "name") != "Ada Lovelace" ||
		me.Body["organization"] != nil || len(me.Body["organizations"].([]any)) != 0 || me.Body["session"].(map[string]any)["current"] != true {
		t.Fatalf("a new user's me: %s", me.Raw)
	}
	adaID := e2e.Field(t, me.Body, "user", "id")
	e2e.WantError(t, w.Do(t, "GET", "/projects", ada, nil), 403, "insufficient_scope")
	e2e.WantError(t, w.Do(t, "POST", "/auth/tokens", ada, nil), 403, "insufficient_scope")
	if again := e2e.SignIn(t, w, "ada"); e2e.Field(t, w.Do(t, "GET", "/auth/me", again, nil).Body, "user", "id") != adaID {
		t.Fatal("a second sign-in made another user")
	}

	// She creates an organization on the free plan and owns it; her session acts for it.
	e2e.WantError(t, w.Do(t, "POST", "/organizations", ada, map[string]any{"name": " "}), 400, "validation_failed")
	e2e.WantError(t, w.Do(t, "POST", "/organizations", w.Token, map[string]any{"name": "By token"}), 400, "bad_request")
	r := w.Do(t, "POST", "/organizations", ada, map[string]any{"name": "Analytical Games"})
	if r.Status != http.StatusCreated || e2e.Field(t, r.Body, "plan") != "free" || e2e.Field(t, r.Body, "slug") != "analytical-games" {
		t.Fatalf("create organization: %d %s", r.Status, r.Raw)
	}
	orgID := e2e.Field(t, r.Body, "id")
	me = w.Do(t, "GET", "/auth/me", ada, nil)
	if e2e.Field(t, me.Body, "organization", "id") != orgID || e2e.Field(t, me.Body, "membership", "role") != "owner" {
		t.Fatalf("after creating: %s", me.Raw)
	}

	// She links the GitHub App through the install flow.
	adasBrowser := newBrowser(t)
	state := adasBrowser.installLink(t, w, ada)
	if r := adasBrowser.callback(t, w, state, w.GitHub.InstallCode("ada", e2e.InstallationID), acceptJSON); r.Status != 200 {
		t.Fatalf("install callback: %d %s", r.Status, r.Raw)
	}

	// She invites Grace as an admin.
	r = w.Do(t, "POST", "/organizations/"+orgID+"/invitations", ada, map[string]any{"email": "Grace@Studio.example", "role": "admin"})
	if r.Status != http.StatusCreated {
		t.Fatalf("invite: %d %s", r.Status, r.Raw)
	}
	_, secret, _ := strings.Cut(e2e.Field(t, r.Body, "link"), "#")
	accept := func(token string) e2e.Response {
		t.Helper()
		return w.Do(t, "POST", "/invitations/accept", token, map[string]any{"secret": secret})
	}

	// Eve's verified primary email is another: refused, and the link stays Grace's. Without a
	// session, or with an API token, accepting is refused too.
	eve := e2e.SignIn(t, w, "eve")
	e2e.WantError(t, accept(eve), 403, "insufficient_scope")
	e2e.WantError(t, w.Do(t, "POST", "/invitations/accept", "", map[string]any{"secret": secret, "name": "Grace"}), 401, "invalid_token")
	e2e.WantError(t, accept(w.Token), 400, "bad_request")
	e2e.WantError(t, accept(auth.SessionPrefix+strings.Repeat("x", 40)), 401, "invalid_token")
	if got := e2e.Items(t, w.Do(t, "GET", "/organizations/"+orgID+"/invitations", ada, nil)); len(got) != 1 {
		t.Fatalf("pending after refusals: %v", got)
	}

	// Grace signs in and accepts; her session now acts for Ada's organization. The link is used.
	grace := e2e.SignIn(t, w, "grace")
	r = accept(grace)
	if r.Status != http.StatusCreated || e2e.Field(t, r.Body, "organization", "id") != orgID || e2e.Field(t, r.Body, "membership", "role") != "admin" ||
		r.Body["token"] != nil {
		t.Fatalf("Grace accepts: %d %s", r.Status, r.Raw)
	}
	graceID := e2e.Field(t, r.Body, "user", "id")
	e2e.WantError(t, accept(grace), 404, "not_found")
	e2e.WantError(t, accept(eve), 404, "not_found")

	// An expired link is refused alike, signed in.
	st := e2e.StoreOf(t, w.Server)
	oldSecret, old := auth.NewInvitation(orgID, "eve@elsewhere.example", kiln.RoleViewer, kiln.User{ID: adaID, Name: "Ada Lovelace"}, time.Now().Add(-8*24*time.Hour))
	if err := st.CreateInvitation(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	e2e.WantError(t, w.Do(t, "POST", "/invitations/accept", eve, map[string]any{"secret": oldSecret}), 404, "not_found")

	// Grace builds: a project of the linked repository, a setting, a build that completes.
	r = w.Do(t, "POST", "/projects/add-repo", grace, map[string]any{"name": "Shooter", "installationId": w.Installation, "repoFullName": "studio/shooter"})
	if r.Status != http.StatusCreated {
		t.Fatalf("Grace adds the project: %d %s", r.Status, r.Raw)
	}
	projectID := e2e.Field(t, r.Body, "id")
	r = w.Do(t, "POST", "/projects/"+projectID+"/build-settings", grace, map[string]any{"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main"})
	if r.Status != http.StatusCreated {
		t.Fatalf("Grace adds a setting: %d %s", r.Status, r.Raw)
	}
	trigger := "/projects/" + projectID + "/build-settings/" + e2e.Field(t, r.Body, "id") + "/trigger"
	r = w.Do(t, "POST", trigger, grace, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("Grace triggers: %d %s", r.Status, r.Raw)
	}
	buildID := e2e.Field(t, r.Body, "buildId")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b := w.Do(t, "GET", "/builds/"+buildID, grace, nil)
		if b.Body["status"] == "complete" {
			if e2e.Field(t, b.Body, "triggeredBy") != "user:"+graceID {
				t.Fatalf("the build's trigger: %s", b.Raw)
			}
			break
		}
		if b.Status != 200 || b.Body["status"] == "failed" || time.Now().After(deadline) {
			t.Fatalf("Grace's build: %d %s", b.Status, b.Raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r = w.Do(t, "POST", "/auth/tokens", grace, map[string]any{"name": "ci"})
	if r.Status != http.StatusCreated {
		t.Fatalf("Grace's API token: %d %s", r.Status, r.Raw)
	}
	graceToken := e2e.Field(t, r.Body, "token")

	// Ada demotes Grace to viewer: at once she may no longer trigger, by session or token.
	members := "/organizations/" + orgID + "/members/"
	if r := w.Do(t, "PATCH", members+graceID, ada, map[string]any{"role": "viewer"}); r.Status != 200 {
		t.Fatalf("demote: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "POST", trigger, grace, nil), 403, "insufficient_scope")
	e2e.WantError(t, w.Do(t, "POST", trigger, graceToken, nil), 403, "insufficient_scope")

	// Ada removes Grace: her token and her session stop working at once.
	if r := w.Do(t, "DELETE", members+graceID, ada, nil); r.Status != 204 {
		t.Fatalf("remove: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/projects", graceToken, nil), 401, "invalid_token")
	e2e.WantError(t, w.Do(t, "GET", "/projects", grace, nil), 401, "invalid_token")

	// The audit log has every change with its actor; a member cannot read it.
	log := e2e.Items(t, w.Do(t, "GET", "/organizations/"+orgID+"/audit-log", ada, nil))
	actors := map[string]string{}
	for _, e := range log {
		actors[e2e.Field(t, e, "kind")] = e2e.Field(t, e, "actor", "name")
	}
	for kind, actor := range map[string]string{
		"organization.created": "Ada Lovelace", "github.linked": "Ada Lovelace", "invitation.created": "Ada Lovelace",
		"invitation.accepted": "Grace Hopper", "project.created": "Grace Hopper", "token.created": "Grace Hopper",
		"member.role_changed": "Ada Lovelace", "member.removed": "Ada Lovelace",
	} {
		if actors[kind] != actor {
			t.Errorf("audit log: %s by %q, want %q (%v)", kind, actors[kind], actor, actors)
		}
	}
}

// TestSessions: a person's console sessions are listed and signed out one by one; a signed-out
// session stops at once; a session switches between the person's organizations only; an API
// token does not switch; and with sign-up off (kiln serve's default) none of it is offered.
func TestSessions(t *testing.T) { e2e.Both(t, sessions) }

func sessions(t *testing.T, dep e2e.Deployment) {
	w := e2e.SignUpWorld(t, dep)
	first, second := e2e.SignIn(t, w, "ada"), e2e.SignIn(t, w, "ada")
	list := e2e.Items(t, w.Do(t, "GET", "/auth/sessions", second, nil))
	if len(list) != 2 || list[0]["current"] != true || list[1]["current"] != false {
		t.Fatalf("sessions: %v", list)
	}
	for _, s := range list {
		if strings.Contains(strings.Join([]string{e2e.Field(t, s, "id"), e2e.Field(t, s, "userAgent")}, " "), "ksess_") {
			t.Fatalf("a session's secret is listed: %v", s)
		}
	}
	firstID := e2e.Field(t, list[1], "id")
	if r := w.Do(t, "DELETE", "/auth/sessions/"+firstID, second, nil); r.Status != 204 {
		t.Fatalf("sign the first out: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/auth/me", first, nil), 401, "invalid_token")

	// Two organizations; the session switches between them, not to another person's.
	a := w.Do(t, "POST", "/organizations", second, map[string]any{"name": "Studio A"})
	b := w.Do(t, "POST", "/organizations", second, map[string]any{"name": "Studio B"})
	eve := e2e.SignIn(t, w, "eve")
	evesOrg := e2e.Field(t, w.Do(t, "POST", "/organizations", eve, map[string]any{"name": "Eve's"}).Body, "id")
	me := w.Do(t, "GET", "/auth/me", second, nil)
	if e2e.Field(t, me.Body, "organization", "id") != e2e.Field(t, b.Body, "id") || len(me.Body["organizations"].([]any)) != 2 {
		t.Fatalf("after creating two: %s", me.Raw)
	}
	switchTo := func(token, id string) e2e.Response {
		return w.Do(t, "PUT", "/auth/session/organization", token, map[string]any{"organizationId": id})
	}
	if r := switchTo(second, e2e.Field(t, a.Body, "id")); r.Status != 200 || e2e.Field(t, r.Body, "organization", "name") != "Studio A" {
		t.Fatalf("switch: %d %s", r.Status, r.Raw)
	}
	if r := w.Do(t, "GET", "/organizations/"+e2e.Field(t, a.Body, "id"), second, nil); r.Status != 200 {
		t.Fatalf("the switched-to organization: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, switchTo(second, evesOrg), 404, "not_found")
	e2e.WantError(t, w.Do(t, "GET", "/organizations/"+evesOrg, second, nil), 404, "not_found")
	e2e.WantError(t, switchTo(w.Token, e2e.Field(t, a.Body, "id")), 400, "bad_request")

	// One person cannot sign another's session out.
	evesSession := e2e.Field(t, e2e.Items(t, w.Do(t, "GET", "/auth/sessions", eve, nil))[0], "id")
	e2e.WantError(t, w.Do(t, "DELETE", "/auth/sessions/"+evesSession, second, nil), 404, "not_found")
	if r := w.Do(t, "GET", "/auth/me", eve, nil); r.Status != 200 {
		t.Fatalf("Eve's session after another's sign-out attempt: %d %s", r.Status, r.Raw)
	}
	// An operator-made member's API token lists the organization it acts for.
	if me := w.Do(t, "GET", "/auth/me", w.Token, nil); len(me.Body["organizations"].([]any)) != 1 || me.Body["session"] != nil {
		t.Fatalf("an API token's me: %s", me.Raw)
	}

	// Leaving keeps the session signed in, for no organization.
	r := w.Do(t, "POST", "/organizations/"+e2e.Field(t, a.Body, "id")+"/invitations", second, map[string]any{"email": "eve@elsewhere.example", "role": "owner"})
	_, secret, _ := strings.Cut(e2e.Field(t, r.Body, "link"), "#")
	if r := w.Do(t, "POST", "/invitations/accept", eve, map[string]any{"secret": secret}); r.Status != 201 {
		t.Fatalf("Eve joins: %d %s", r.Status, r.Raw)
	}
	if r := w.Do(t, "DELETE", "/organizations/"+e2e.Field(t, a.Body, "id")+"/membership", eve, nil); r.Status != 204 {
		t.Fatalf("Eve leaves: %d %s", r.Status, r.Raw)
	}
	if me := w.Do(t, "GET", "/auth/me", eve, nil); me.Status != 200 || me.Body["organization"] != nil || len(me.Body["organizations"].([]any)) != 1 {
		t.Fatalf("after leaving: %d %s", me.Status, me.Raw)
	}

	// One person creates and owns at most 10 organizations.
	grace := e2e.SignIn(t, w, "grace")
	for i := range 10 {
		if r := w.Do(t, "POST", "/organizations", grace, map[string]any{"name": "Grace " + strconv.Itoa(i)}); r.Status != http.StatusCreated {
			t.Fatalf("Grace's organization %d: %d %s", i, r.Status, r.Raw)
		}
	}
	e2e.WantError(t, w.Do(t, "POST", "/organizations", grace, map[string]any{"name": "One too many"}), 409, "invalid_state")

	// Signing out: the current session ends.
	if r := w.Do(t, "DELETE", "/auth/sessions/"+e2e.Field(t, list[0], "id"), second, nil); r.Status != 204 {
		t.Fatalf("sign out: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/auth/me", second, nil), 401, "invalid_token")
}

// TestSignUpOff: kiln serve's default, KILN_SIGNUP=off: no GitHub sign-in, no self-service
// organizations, and invitations are accepted with the form.
func TestSignUpOff(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	if r := w.Do(t, "GET", "/auth/methods", "", nil); r.Body["github"] != false {
		t.Fatalf("sign-in methods: %s", r.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/auth/github/signin?state=0123456789abcdefgh", "", nil), 404, "not_found")
	e2e.WantError(t, w.Do(t, "POST", "/auth/github/session", "", map[string]any{"code": "x"}), 404, "not_found")
	e2e.WantError(t, w.Do(t, "POST", "/organizations", w.Token, map[string]any{"name": "Mine"}), 404, "not_found")
	if list := e2e.Items(t, w.Do(t, "GET", "/auth/sessions", w.Token, nil)); len(list) != 0 {
		t.Fatalf("an API token's sessions: %v", list)
	}
}
