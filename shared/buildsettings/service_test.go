package buildsettings

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/outbound"
)

// fakeStore keeps the organization and records what was written.
type fakeStore struct {
	org              *kiln.Organization
	created, updated []*kiln.BuildSetting
	deleted          []string
}

func (f *fakeStore) GetOrganization(_ context.Context, id string) (*kiln.Organization, error) {
	if f.org == nil || f.org.ID != id {
		return nil, kiln.NotFound("organization")
	}
	return f.org, nil
}

func (f *fakeStore) CreateBuildSetting(_ context.Context, s *kiln.BuildSetting) error {
	f.created = append(f.created, s)
	return nil
}

func (f *fakeStore) UpdateBuildSetting(_ context.Context, s *kiln.BuildSetting) error {
	f.updated = append(f.updated, s)
	return nil
}

func (f *fakeStore) DeleteBuildSetting(_ context.Context, orgID, projectID, id string) error {
	f.deleted = append(f.deleted, orgID+"/"+projectID+"/"+id)
	return nil
}

// fakeEngines provides a fixed list of versions.
type fakeEngines []string

func (e fakeEngines) Provides(_ context.Context, v string) (bool, error) {
	for _, have := range e {
		if have == v {
			return true, nil
		}
	}
	return false, nil
}

func (e fakeEngines) Versions(context.Context) ([]string, error) { return e, nil }

// fakeSealer "seals" visibly, so a test can tell the associated data used.
type fakeSealer struct{}

func (fakeSealer) Seal(plain, ad []byte) []byte {
	return []byte("sealed(" + string(ad) + "):" + string(plain))
}

// autoDeployPlans allows auto deploy on pro only.
type autoDeployPlans struct{}

func (autoDeployPlans) CheckAutoDeploy(org *kiln.Organization) error {
	if org.Plan != kiln.PlanPro {
		return kiln.PlanLimitError(org.Plan, "no auto deploy")
	}
	return nil
}

// blockPrivate refuses upload URLs on "private.example".
func blockPrivate(_ context.Context, rawURL string) error {
	if strings.Contains(rawURL, "private.example") {
		return &outbound.BlockedError{}
	}
	return nil
}

var testNow = time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)

func newService(plan kiln.Plan) (*Service, *fakeStore) {
	st := &fakeStore{org: &kiln.Organization{ID: "org1", Plan: plan}}
	return &Service{
		Store: st, Engines: fakeEngines{"5.3", "5.4"}, Sealer: fakeSealer{}, Plans: autoDeployPlans{},
		CheckUploadURL: blockPrivate, TimeLimit: 2 * time.Hour, Now: func() time.Time { return testNow },
	}, st
}

func str(v string) Value[string] { return Value[string]{Set: true, Value: v} }
func flag(v bool) Value[bool]    { return Value[bool]{Set: true, Value: v} }
func null[T any]() Value[T]      { return Value[T]{Set: true, Null: true} }

// complete are the fields of a valid GitHub setting.
func complete() Fields {
	return Fields{Platform: str("Win64"), BuildType: str("Development"), UEVersion: str("5.3"), Trigger: str("manual"), Branch: str("main")}
}

var github = &kiln.Project{ID: "p1", OrganizationID: "org1", SourceControl: kiln.SourceGitHub, UprojectPath: "Game/Game.uproject"}

// wantErr checks err's code and, when field is set, that field's problem.
func wantErr(t *testing.T, err error, code, field, problem string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	var ke *kiln.Error
	if !errors.As(err, &ke) || ke.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
	if field != "" && !strings.Contains(ke.Fields[field], problem) {
		t.Fatalf("fields = %v, want %s: %q", ke.Fields, field, problem)
	}
}

func TestCreate(t *testing.T) {
	notify := true
	defaults := kiln.ProjectDefaults{Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, UEVersion: "5.4",
		Trigger: kiln.TriggerPush, NotifyOnComplete: &notify}
	tests := []struct {
		name     string
		plan     kiln.Plan
		defaults kiln.ProjectDefaults
		fields   func(f *Fields)
		code     string
		field    string
		problem  string
		check    func(t *testing.T, s *kiln.BuildSetting)
	}{
		{name: "complete", plan: kiln.PlanFree, fields: func(*Fields) {}, check: func(t *testing.T, s *kiln.BuildSetting) {
			if s.Platform != kiln.PlatformWin64 || s.UprojectPath != "Game/Game.uproject" || s.OrganizationID != "org1" || s.ProjectID != "p1" {
				t.Errorf("setting = %+v", s)
			}
			if want := kiln.Now(func() time.Time { return testNow }); !s.CreatedAt.Equal(want) || !s.UpdatedAt.Equal(want) {
				t.Errorf("times = %v, %v, want %v", s.CreatedAt, s.UpdatedAt, want)
			}
		}},
		{name: "organization defaults fill what is left out", plan: kiln.PlanFree, defaults: defaults,
			fields: func(f *Fields) { *f = Fields{Branch: str("main")} },
			check: func(t *testing.T, s *kiln.BuildSetting) {
				// ueVersion stays absent: each build takes the .uproject's before the organization's.
				if s.Platform != kiln.PlatformLinux || s.BuildType != kiln.BuildTypeShipping || s.UEVersion != "" ||
					s.Trigger != kiln.TriggerPush || !s.NotifyOnComplete {
					t.Errorf("setting = %+v, want the organization's defaults and no ueVersion", s)
				}
			}},
		{name: "given fields win over defaults", plan: kiln.PlanFree, defaults: defaults, fields: func(*Fields) {},
			check: func(t *testing.T, s *kiln.BuildSetting) {
				if s.Platform != kiln.PlatformWin64 || s.UEVersion != "5.3" {
					t.Errorf("setting = %+v", s)
				}
			}},
		{name: "fields are trimmed", plan: kiln.PlanFree, fields: func(f *Fields) { f.Branch = str("  dev ") },
			check: func(t *testing.T, s *kiln.BuildSetting) {
				if s.Branch != "dev" {
					t.Errorf("branch = %q", s.Branch)
				}
			}},
		{name: "required field left out", plan: kiln.PlanFree, fields: func(f *Fields) { f.Trigger = Value[string]{} },
			code: kiln.EValidation, field: "trigger", problem: "is required"},
		{name: "ueVersion left out is resolved per build", plan: kiln.PlanFree, fields: func(f *Fields) { f.UEVersion = Value[string]{} },
			check: func(t *testing.T, s *kiln.BuildSetting) {
				if s.UEVersion != "" {
					t.Errorf("ueVersion = %q, want none", s.UEVersion)
				}
			}},
		{name: "ueVersion null is resolved per build", plan: kiln.PlanFree, fields: func(f *Fields) { f.UEVersion = null[string]() }},
		{name: "scheduled without schedule builds nightly", plan: kiln.PlanFree, fields: func(f *Fields) { f.Trigger = str("scheduled") },
			check: func(t *testing.T, s *kiln.BuildSetting) {
				if s.Schedule != "0 3 * * *" {
					t.Errorf("schedule = %q, want 0 3 * * *", s.Schedule)
				}
			}},
		{name: "branch required for GitHub", plan: kiln.PlanFree, fields: func(f *Fields) { f.Branch = Value[string]{} },
			code: kiln.EValidation, field: "branch", problem: "is required for GitHub projects"},
		{name: "null of a required field", plan: kiln.PlanFree, fields: func(f *Fields) { f.Platform = null[string]() },
			code: kiln.EValidation, field: "platform", problem: "must not be null"},
		{name: "null autoDeploy", plan: kiln.PlanFree, fields: func(f *Fields) { f.AutoDeploy = null[bool]() },
			code: kiln.EValidation, field: "autoDeploy", problem: "must not be null"},
		{name: "timeoutMinutes 0", plan: kiln.PlanFree, fields: func(f *Fields) { f.TimeoutMinutes = Value[int]{Set: true} },
			code: kiln.EValidation, field: "timeoutMinutes", problem: "must be 1 or more"},
		{name: "timeoutMinutes over the service's limit", plan: kiln.PlanFree,
			fields: func(f *Fields) { f.TimeoutMinutes = Value[int]{Set: true, Value: 121} },
			code:   kiln.EValidation, field: "timeoutMinutes", problem: "from 1 to 120"},
		{name: "invalid platform", plan: kiln.PlanFree, fields: func(f *Fields) { f.Platform = str("Amiga") },
			code: kiln.EValidation, field: "platform", problem: "must be one of"},
		{name: "engine no host provides", plan: kiln.PlanFree, fields: func(f *Fields) { f.UEVersion = str("5.1") },
			code: kiln.EEngineNotFound, field: "ueVersion", problem: "no build host provides this version"},
		{name: "an agent pool brings its own engines", plan: kiln.PlanFree,
			fields: func(f *Fields) { f.UEVersion, f.AgentPool = str("5.1"), str("studio") }},
		{name: "auto deploy on a plan without it", plan: kiln.PlanFree,
			fields: func(f *Fields) { f.AutoDeploy, f.UploadBuildURL = flag(true), str("https://up.example/x") },
			code:   kiln.EPlanLimitReached},
		{name: "an upload URL on a plan without auto deploy", plan: kiln.PlanFree,
			fields: func(f *Fields) { f.UploadBuildURL = str("https://up.example/x") }, code: kiln.EPlanLimitReached},
		{name: "an upload header on a plan without auto deploy", plan: kiln.PlanFree,
			fields: func(f *Fields) { f.UploadBuildAuthHeader = str("Bearer x") }, code: kiln.EPlanLimitReached},
		{name: "auto deploy on a plan with it", plan: kiln.PlanPro,
			fields: func(f *Fields) { f.AutoDeploy, f.UploadBuildURL = flag(true), str("https://up.example/x") }},
		{name: "an upload URL kiln may not reach", plan: kiln.PlanPro,
			fields: func(f *Fields) { f.UploadBuildURL = str("https://private.example/x") },
			code:   kiln.EValidation, field: "uploadBuildUrl", problem: "kiln may not reach"},
		{name: "upload header is sealed to the setting", plan: kiln.PlanPro,
			fields: func(f *Fields) {
				f.UploadBuildURL, f.UploadBuildAuthHeader = str("https://up.example/x"), str("Bearer s3cret")
			},
			check: func(t *testing.T, s *kiln.BuildSetting) {
				if want := "sealed(build-setting:" + s.ID + "):Bearer s3cret"; string(s.UploadBuildAuthHeader) != want {
					t.Errorf("header = %q, want %q", s.UploadBuildAuthHeader, want)
				}
			}},
		{name: "upload header with a line break", plan: kiln.PlanPro,
			fields: func(f *Fields) { f.UploadBuildAuthHeader = str("a\nb") },
			code:   kiln.EValidation, field: "uploadBuildAuthHeader", problem: "without line breaks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, store := newService(tt.plan)
			org := &kiln.Organization{ID: "org1", Plan: tt.plan, DefaultProjectSettings: tt.defaults}
			f := complete()
			tt.fields(&f)
			got, err := svc.Create(context.Background(), org, github, f)
			wantErr(t, err, tt.code, tt.field, tt.problem)
			if tt.code != "" {
				if len(store.created) != 0 {
					t.Fatalf("refused setting was stored: %+v", store.created[0])
				}
				return
			}
			if len(store.created) != 1 || store.created[0] != got {
				t.Fatalf("stored %v, want the answered setting", store.created)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	// existing has auto deploy set up, as before a downgrade to free.
	existing := func() *kiln.BuildSetting {
		return &kiln.BuildSetting{ID: "s1", OrganizationID: "org1", ProjectID: "p1", Platform: kiln.PlatformWin64,
			BuildType: kiln.BuildTypeDevelopment, UEVersion: "5.0", Trigger: kiln.TriggerManual, Branch: "main",
			AutoDeploy: true, UploadBuildURL: "https://private.example/x", UploadBuildAuthHeader: []byte("old")}
	}
	tests := []struct {
		name    string
		plan    kiln.Plan
		fields  Fields
		code    string
		field   string
		problem string
		check   func(t *testing.T, s *kiln.BuildSetting)
	}{
		{name: "an unrelated field keeps auto deploy on a plan without it, unchecked engine and URL", plan: kiln.PlanFree,
			fields: Fields{NotifyOnComplete: flag(true)},
			check: func(t *testing.T, s *kiln.BuildSetting) {
				if !s.NotifyOnComplete || !s.AutoDeploy || string(s.UploadBuildAuthHeader) != "old" {
					t.Errorf("setting = %+v", s)
				}
			}},
		{name: "pointing auto deploy elsewhere on a plan without it", plan: kiln.PlanFree,
			fields: Fields{UploadBuildURL: str("https://up.example/y")}, code: kiln.EPlanLimitReached},
		{name: "a new header on a plan without auto deploy", plan: kiln.PlanFree,
			fields: Fields{UploadBuildAuthHeader: str("Bearer y")}, code: kiln.EPlanLimitReached},
		{name: "turning auto deploy off on a plan without it", plan: kiln.PlanFree,
			fields: Fields{AutoDeploy: flag(false), UploadBuildURL: null[string](), UploadBuildAuthHeader: null[string]()},
			check: func(t *testing.T, s *kiln.BuildSetting) {
				if s.AutoDeploy || s.UploadBuildURL != "" || s.UploadBuildAuthHeader != nil {
					t.Errorf("setting = %+v", s)
				}
			}},
		{name: "a new upload URL is checked", plan: kiln.PlanPro,
			fields: Fields{UploadBuildURL: str("https://private.example/y")},
			code:   kiln.EValidation, field: "uploadBuildUrl", problem: "kiln may not reach"},
		{name: "a new origin drops the stored header", plan: kiln.PlanPro,
			fields: Fields{UploadBuildURL: str("https://up.example/y")},
			check: func(t *testing.T, s *kiln.BuildSetting) {
				if s.UploadBuildAuthHeader != nil {
					t.Errorf("header = %q, want dropped", s.UploadBuildAuthHeader)
				}
			}},
		{name: "a new ueVersion is checked", plan: kiln.PlanPro, fields: Fields{UEVersion: str("5.1")},
			code: kiln.EEngineNotFound, field: "ueVersion", problem: "no build host provides"},
		{name: "leaving an agent pool checks the engine", plan: kiln.PlanPro, fields: Fields{AgentPool: null[string]()},
			code: kiln.EEngineNotFound},
		{name: "timeoutMinutes is checked when given", plan: kiln.PlanPro, fields: Fields{TimeoutMinutes: Value[int]{Set: true, Value: 500}},
			code: kiln.EValidation, field: "timeoutMinutes", problem: "from 1 to 120"},
		{name: "a required field cleared", plan: kiln.PlanPro, fields: Fields{Branch: null[string]()},
			code: kiln.EValidation, field: "branch", problem: "is required for GitHub projects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, store := newService(tt.plan)
			st := existing()
			got, err := svc.Update(context.Background(), github, st, tt.fields)
			if before := existing(); st.NotifyOnComplete != before.NotifyOnComplete || st.UploadBuildURL != before.UploadBuildURL ||
				string(st.UploadBuildAuthHeader) != "old" || !st.UpdatedAt.IsZero() {
				t.Fatalf("the given setting changed: %+v", st)
			}
			wantErr(t, err, tt.code, tt.field, tt.problem)
			if tt.code != "" {
				if len(store.updated) != 0 {
					t.Fatalf("refused update was stored: %+v", store.updated[0])
				}
				return
			}
			if len(store.updated) != 1 || store.updated[0] != got || !got.UpdatedAt.Equal(kiln.Now(svc.Now)) {
				t.Fatalf("stored %v, want the answered setting with UpdatedAt now", store.updated)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	svc, store := newService(kiln.PlanFree)
	if err := svc.Delete(context.Background(), &kiln.BuildSetting{ID: "s1", OrganizationID: "org1", ProjectID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if len(store.deleted) != 1 || store.deleted[0] != "org1/p1/s1" {
		t.Fatalf("deleted = %v", store.deleted)
	}
}

func TestEngineNotFoundNamesProvidedVersions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		engines Engines
		want    string
	}{
		{"listed", fakeEngines{"5.3", "5.4"}, "no build host provides Unreal Engine 5.1; this service provides 5.3, 5.4"},
		{"none yet", fakeEngines{}, "no build host provides Unreal Engine 5.1; this service provides no engine version yet"},
		{"not listable", onlyProvides{}, "no build host provides Unreal Engine 5.1; ask the operator which versions are installed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := &Service{Engines: tt.engines}
			err := svc.checkEngine(context.Background(), "5.1")
			if msg := kiln.ErrorMessage(err); msg != tt.want {
				t.Fatalf("message = %q, want %q", msg, tt.want)
			}
		})
	}
}

type onlyProvides struct{}

func (onlyProvides) Provides(context.Context, string) (bool, error) { return false, nil }
