package buildsettings

import (
	"context"
	"slices"
	"testing"

	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// recordedCaches records the keys whose caches were removed.
type recordedCaches struct{ removed []buildcache.Key }

func (r *recordedCaches) DeleteKey(_ context.Context, k buildcache.Key) (int, error) {
	r.removed = append(r.removed, k)
	return 1, nil
}

// settingList answers a project's remaining settings.
type settingList []*kiln.BuildSetting

func (l settingList) ListBuildSettings(context.Context, string, string) ([]*kiln.BuildSetting, error) {
	return l, nil
}

// TestUnusedCachesGo: deleting a setting, or moving it to another branch, platform or engine
// version, removes the build caches of its old key unless another setting of the project still
// builds that key; other changes keep them.
func TestUnusedCachesGo(t *testing.T) {
	linux := func(id, branch, engine string) *kiln.BuildSetting {
		return &kiln.BuildSetting{ID: id, OrganizationID: "org1", ProjectID: "p1", Platform: kiln.PlatformLinux,
			BuildType: kiln.BuildTypeShipping, UEVersion: engine, Branch: branch, Trigger: kiln.TriggerManual}
	}
	key := func(branch, engine string) buildcache.Key {
		return buildcache.Key{Org: "org1", Project: "p1", Ref: branch, Platform: "Linux", Engine: engine}
	}
	for _, tt := range []struct {
		name   string
		others settingList
		change func(svc *Service, st *kiln.BuildSetting) error
		want   []buildcache.Key
	}{
		{"DeletedAndUnused", nil, func(svc *Service, st *kiln.BuildSetting) error { return svc.Delete(context.Background(), st) },
			[]buildcache.Key{key("main", "5.3")}},
		{"DeletedButAnotherSettingBuildsIt", settingList{linux("s2", "main", "5.3")},
			func(svc *Service, st *kiln.BuildSetting) error { return svc.Delete(context.Background(), st) }, nil},
		{"EngineChanged", nil, func(svc *Service, st *kiln.BuildSetting) error {
			_, err := svc.Update(context.Background(), &kiln.Project{ID: "p1", OrganizationID: "org1", SourceControl: kiln.SourceGitHub}, st, Fields{UEVersion: str("5.4")})
			return err
		}, []buildcache.Key{key("main", "5.3")}},
		{"DeletedButASettingWithoutEngineMayBuildIt", settingList{linux("s2", "main", "")},
			func(svc *Service, st *kiln.BuildSetting) error { return svc.Delete(context.Background(), st) }, nil},
		{"BuildTypeChangedKeepsTheKey", nil, func(svc *Service, st *kiln.BuildSetting) error {
			_, err := svc.Update(context.Background(), &kiln.Project{ID: "p1", OrganizationID: "org1", SourceControl: kiln.SourceGitHub}, st, Fields{BuildType: str("Development")})
			return err
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := newService(kiln.PlanPro)
			caches := &recordedCaches{}
			svc.Caches, svc.Settings = caches, tt.others
			if err := tt.change(svc, linux("s1", "main", "5.3")); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(caches.removed, tt.want) {
				t.Fatalf("removed the caches of %v; want %v", caches.removed, tt.want)
			}
		})
	}
}
