package builds

import (
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestResolveEngine(t *testing.T) {
	project := func(path, version string) *kiln.Project {
		return &kiln.Project{UprojectPath: path, Uproject: &kiln.UprojectInfo{Path: path, EngineVersion: version}}
	}
	org := func(v string) *kiln.Organization {
		return &kiln.Organization{DefaultProjectSettings: kiln.ProjectDefaults{UEVersion: v}}
	}
	installed := []string{"5.3", "5.4", "5.10"}
	for _, tt := range []struct {
		name      string
		setting   kiln.BuildSetting
		project   *kiln.Project
		org       *kiln.Organization
		installed []string
		version   string
		source    kiln.UEVersionSource
		problem   []string
	}{
		{"the setting's", kiln.BuildSetting{UEVersion: "5.3"}, project("G.uproject", "5.4"), org("5.4"), installed, "5.3", kiln.UEVersionFromSetting, nil},
		{"the .uproject's", kiln.BuildSetting{}, project("G.uproject", "5.4"), org("5.3"), installed, "5.4", kiln.UEVersionFromUproject, nil},
		{"the .uproject's, a patch of an installed minor", kiln.BuildSetting{}, project("G.uproject", "5.4.2"), nil, installed, "5.4.2", kiln.UEVersionFromUproject, nil},
		{"a source build's GUID falls to the organization's", kiln.BuildSetting{}, project("G.uproject", "{3F2A9C1B-4D5E-4F60-8A7B-9C0D1E2F3A4B}"), org("5.3"), installed, "5.3", kiln.UEVersionFromOrganization, nil},
		{"another .uproject than the setting's falls to the organization's", kiln.BuildSetting{UprojectPath: "Other/O.uproject"}, project("G.uproject", "5.4"), org("5.3"), installed, "5.3", kiln.UEVersionFromOrganization, nil},
		{"no .uproject read, no default: the newest installed", kiln.BuildSetting{}, &kiln.Project{}, org(""), installed, "5.10", kiln.UEVersionFromNewest, nil},
		{"a .uproject naming an engine not installed", kiln.BuildSetting{}, project("G.uproject", "5.1"), org("5.3"), installed, "5.1", kiln.UEVersionFromUproject,
			[]string{"Unreal Engine 5.1", "installed: 5.3, 5.4, 5.10"}},
		{"an agent pool brings its own engines", kiln.BuildSetting{AgentPool: "studio"}, project("G.uproject", "5.1"), nil, installed, "5.1", kiln.UEVersionFromUproject, nil},
		{"installed unknown: not checked", kiln.BuildSetting{}, project("G.uproject", "5.1"), nil, nil, "5.1", kiln.UEVersionFromUproject, nil},
		{"nothing at all", kiln.BuildSetting{}, &kiln.Project{}, nil, nil, "", kiln.UEVersionFromNewest, []string{"no engine version"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ResolveEngine(&tt.setting, tt.project, tt.org, tt.installed)
			if got.Version != tt.version || got.Source != tt.source {
				t.Fatalf("got %s from %s, want %s from %s", got.Version, got.Source, tt.version, tt.source)
			}
			if (got.Problem != "") != (tt.problem != nil) {
				t.Fatalf("problem %q, want one with %q", got.Problem, tt.problem)
			}
			for _, want := range tt.problem {
				if !strings.Contains(got.Problem, want) {
					t.Fatalf("problem %q does not say %q", got.Problem, want)
				}
			}
		})
	}
}
