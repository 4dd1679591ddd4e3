// Package storetest is the contract suite that every store.Store implementation passes. Run it
// from the implementation's tests:
//
//	func TestStore(t *testing.T) { storetest.Run(t, func(t *testing.T) store.Store { ... }) }
//
// open may hand out one store shared by many subtests (DynamoDB uses one table), so every subtest
// makes its own organizations and never assumes the store is empty (the tests of the scans across
// organizations date their items long before any test ran; see queue.go). open arranges for the
// store to be closed (t.Cleanup) when it needs closing.
package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// Run runs the whole contract suite against the stores that open returns.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Organizations", func(t *testing.T) { testOrganizations(t, open) })
	t.Run("Members", func(t *testing.T) { testMembers(t, open) })
	t.Run("Invitations", func(t *testing.T) { testInvitations(t, open) })
	t.Run("MemberChanges", func(t *testing.T) { testMemberChanges(t, open) })
	t.Run("Users", func(t *testing.T) { testUsers(t, open) })
	t.Run("AuditLog", func(t *testing.T) { testAuditLog(t, open) })
	t.Run("Credentials", func(t *testing.T) { testCredentials(t, open) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, open) })
	t.Run("Agents", func(t *testing.T) { testAgents(t, open) })
	t.Run("Projects", func(t *testing.T) { testProjects(t, open) })
	t.Run("ProjectLimit", func(t *testing.T) { testProjectLimit(t, open) })
	t.Run("BuildSettings", func(t *testing.T) { testBuildSettings(t, open) })
	t.Run("Builds", func(t *testing.T) { testBuilds(t, open) })
	t.Run("PartialUpdates", func(t *testing.T) { testPartialUpdates(t, open) })
	t.Run("CreateBuildOnce", func(t *testing.T) { testCreateBuildOnce(t, open) })
	t.Run("BuildNumbers", func(t *testing.T) { testBuildNumbers(t, open) })
	t.Run("QueuedBuilds", func(t *testing.T) { testQueuedBuilds(t, open) })
	t.Run("BuildsAwaitingDelivery", func(t *testing.T) { testBuildsAwaitingDelivery(t, open) })
	t.Run("DeliverySchedule", func(t *testing.T) { testDeliverySchedule(t, open) })
	t.Run("ScheduledBuildSettings", func(t *testing.T) { testScheduledBuildSettings(t, open) })
	t.Run("GitHubInstallations", func(t *testing.T) { testGitHubInstallations(t, open) })
	t.Run("Perforce", func(t *testing.T) { testPerforce(t, open) })
	t.Run("Artifacts", func(t *testing.T) { testArtifacts(t, open) })
	t.Run("ArtifactsCreatedBefore", func(t *testing.T) { testArtifactsCreatedBefore(t, open) })
	t.Run("Webhooks", func(t *testing.T) { testWebhooks(t, open) })
	t.Run("OnceKeys", func(t *testing.T) { testOnceKeys(t, open) })
	t.Run("Usage", func(t *testing.T) { testUsage(t, open) })
	t.Run("HostedHosts", func(t *testing.T) { testHostedHosts(t, open) })
	t.Run("Paging", func(t *testing.T) { testPaging(t, open) })
	t.Run("NotFoundNames", func(t *testing.T) { testNotFoundNames(t, open) })
	t.Run("Races", func(t *testing.T) { testRaces(t, open) })
}

// now is a test time as stores keep it: UTC with millisecond precision.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

func ptr[T any](v T) *T { return &v }

// fixture is a fresh organization with its owner and the owner's first token.
type fixture struct {
	org   *kiln.Organization
	owner *kiln.Member
	token *kiln.Token
}

// newOrganization builds (without storing) an organization with a unique slug, its owner and token.
func newOrganization() fixture {
	at := now()
	org := &kiln.Organization{
		ID:        kiln.NewID(),
		Name:      "Studio",
		Plan:      kiln.PlanFree,
		CreatedAt: at,
		UpdatedAt: at,
	}
	org.Slug = "studio-" + org.ID
	owner := newMember(org.ID, "owner-"+org.ID+"@example.com", kiln.RoleOwner)
	return fixture{org: org, owner: owner, token: newToken(org.ID, owner.User.ID)}
}

// createOrganization stores a fresh organization and fails the test if that does not work.
func createOrganization(t *testing.T, s store.Store) fixture {
	t.Helper()
	f := newOrganization()
	if err := s.CreateOrganization(t.Context(), f.org, f.owner, f.token); err != nil {
		t.Fatalf("CreateOrganization: %v", err)
	}
	return f
}

func newMember(orgID, email string, role kiln.Role) *kiln.Member {
	at := now()
	return &kiln.Member{
		OrganizationID: orgID,
		User:           kiln.User{ID: kiln.NewID(), Email: email, Name: "Dev " + email, CreatedAt: at},
		Role:           role,
		CreatedAt:      at,
	}
}

func newToken(orgID, userID string) *kiln.Token {
	return &kiln.Token{Credential: newCredential(orgID, "kiln_"), UserID: userID}
}

// wantCode fails the test unless err carries code.
func wantCode(t *testing.T, err error, code, what string) {
	t.Helper()
	if !kiln.IsCode(err, code) {
		t.Fatalf("%s: got error %v, want code %s", what, err, code)
	}
}

// wantOK fails the test on err.
func wantOK(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantEqual fails the test unless got and want are equal as stores keep values: times equal at
// millisecond precision (and read back in UTC), nil and empty slices alike.
func wantEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if d := diff("", reflect.ValueOf(got), reflect.ValueOf(want)); d != "" {
		t.Fatalf("%s: %s", what, d)
	}
}

var timeType = reflect.TypeFor[time.Time]()

// diff describes the first difference between got and want, or returns "".
func diff(path string, got, want reflect.Value) string {
	if got.Kind() != want.Kind() {
		return fmt.Sprintf("%s: kind %v, want %v", path, got.Kind(), want.Kind())
	}
	if got.Type() == timeType {
		g, w := got.Interface().(time.Time), want.Interface().(time.Time)
		if !g.Round(time.Millisecond).Equal(w.Round(time.Millisecond)) {
			return fmt.Sprintf("%s: %v, want %v", path, g, w)
		}
		if !g.IsZero() && g.Location() != time.UTC {
			return fmt.Sprintf("%s: %v is not in UTC", path, g)
		}
		return ""
	}
	switch got.Kind() {
	case reflect.Pointer:
		if got.IsNil() || want.IsNil() {
			if got.IsNil() != want.IsNil() {
				return fmt.Sprintf("%s: nil is %v, want %v", path, got.IsNil(), want.IsNil())
			}
			return ""
		}
		return diff(path, got.Elem(), want.Elem())
	case reflect.Slice:
		if got.Len() != want.Len() {
			return fmt.Sprintf("%s: length %d, want %d (%v vs %v)", path, got.Len(), want.Len(), got, want)
		}
		for i := range got.Len() {
			if d := diff(fmt.Sprintf("%s[%d]", path, i), got.Index(i), want.Index(i)); d != "" {
				return d
			}
		}
	case reflect.Struct:
		for i := range got.NumField() {
			if d := diff(path+"."+got.Type().Field(i).Name, got.Field(i), want.Field(i)); d != "" {
				return d
			}
		}
	default:
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			return fmt.Sprintf("%s: %#v, want %#v", path, got.Interface(), want.Interface())
		}
	}
	return ""
}

// lister returns one page of a list.
type lister[T any] func(p store.Page) ([]T, string, error)

// walk pages through a whole list with the given limit and returns the ids in the order seen. It
// fails the test when a page is over the limit, an id repeats, or a cursor leads to an empty page
// (the last page must say "" itself). between, when set, runs after each page.
func walk[T any](t *testing.T, limit int, list lister[T], id func(T) string, between func()) []string {
	t.Helper()
	var ids []string
	seen := map[string]bool{}
	after := ""
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatalf("walk: more than 1000 pages, the cursor does not advance")
		}
		items, next, err := list(store.Page{Limit: limit, After: after})
		if err != nil {
			t.Fatalf("walk: page %d (after %q): %v", page, after, err)
		}
		if len(items) > limit {
			t.Fatalf("walk: page %d has %d items, limit %d", page, len(items), limit)
		}
		if page > 0 && len(items) == 0 {
			t.Fatalf("walk: cursor %q of page %d led to an empty page; the last page must return next \"\"", after, page-1)
		}
		for _, it := range items {
			i := id(it)
			if seen[i] {
				t.Fatalf("walk: %s returned twice (page %d)", i, page)
			}
			seen[i] = true
			ids = append(ids, i)
		}
		if next == "" {
			return ids
		}
		after = next
		if between != nil {
			between()
		}
	}
}

// newestFirst returns ids sorted newest (largest) first.
func newestFirst(ids []string) []string {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(b, a) })
	return out
}

// wantIDs fails the test unless got lists exactly want, in order.
func wantIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got  %v\n want %v", what, got, want)
	}
}

func memberID(m *kiln.Member) string   { return m.User.ID }
func tokenID(tk *kiln.Token) string    { return tk.ID }
func projectID(p *kiln.Project) string { return p.ID }
func buildID(b *kiln.Build) string     { return b.ID }
