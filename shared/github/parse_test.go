package github

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestParseUproject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		path    string
		data    string
		want    *kiln.UprojectInfo
		problem string // part of the error message; "" means no error
	}{
		{name: "unreal 5.3 project", path: "Games/Shooter/Shooter.uproject", data: uprojectJSON,
			want: &kiln.UprojectInfo{Path: "Games/Shooter/Shooter.uproject", ProjectName: "Shooter", EngineVersion: "5.3",
				Modules: []kiln.UprojectModule{{Name: "Shooter", Type: "Runtime", LoadingPhase: "Default"}},
				Plugins: []kiln.UprojectPlugin{{Name: "ModelingToolsEditorMode", Enabled: true}}}},
		{name: "byte order mark", path: "Game.uproject", data: "\xef\xbb\xbf" + `{"EngineAssociation": "5.4"}`,
			want: &kiln.UprojectInfo{Path: "Game.uproject", ProjectName: "Game", EngineVersion: "5.4",
				Modules: []kiln.UprojectModule{}, Plugins: []kiln.UprojectPlugin{}}},
		{name: "source build guid", path: "Game.uproject", data: `{"EngineAssociation": "{3F2A9C1B-4D5E-4F60-8A7B-9C0D1E2F3A4B}"}`,
			want: &kiln.UprojectInfo{Path: "Game.uproject", ProjectName: "Game", EngineVersion: "{3F2A9C1B-4D5E-4F60-8A7B-9C0D1E2F3A4B}",
				Modules: []kiln.UprojectModule{}, Plugins: []kiln.UprojectPlugin{}}},
		{name: "no engine association", path: "Game.uproject", data: `{"FileVersion": 3, "Plugins": [{"Name": "Off"}]}`,
			want: &kiln.UprojectInfo{Path: "Game.uproject", ProjectName: "Game",
				Modules: []kiln.UprojectModule{}, Plugins: []kiln.UprojectPlugin{{Name: "Off"}}}},
		{name: "trailing comma", path: "Game.uproject", data: "{\n\"EngineAssociation\": \"5.3\",\n\"Modules\": [],\n}",
			problem: "trailing comma on line 3"},
		{name: "trailing comma in array", path: "Game.uproject", data: "{\"Modules\": [{\"Name\": \"A\"},\n]}",
			problem: "trailing comma on line 1"},
		{name: "not json", path: "Game.uproject", data: "{EngineAssociation = 5.3}", problem: "is not valid JSON"},
		{name: "array", path: "Game.uproject", data: `[]`, problem: "is not a JSON object"},
		{name: "empty", path: "Game.uproject", data: ``, problem: "is not a JSON object"},
		{name: "wrong type", path: "Game.uproject", data: `{"Modules": "Shooter"}`, problem: "Modules must not be a JSON string"},
		{name: "too large", path: "Game.uproject", data: `{"Description": "` + strings.Repeat("x", MaxUprojectSize) + `"}`, problem: "larger than 1 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseUproject(tt.path, []byte(tt.data))
			if tt.problem != "" {
				if !kiln.IsCode(err, kiln.EValidation) || !strings.Contains(err.Error(), tt.problem) {
					t.Fatalf("error %v, want validation_failed with %q", err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestIsUproject(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"Game.uproject":                true,
		"a/b/c/Game.uproject":          true,
		"a/b/c/d/Game.uproject":        false,
		"a/Game.uproject.bak":          false,
		".uproject":                    false,
		"Games/Shooter/Shooter.uasset": false,
	} {
		if isUproject(p) != want {
			t.Errorf("isUproject(%q) = %v, want %v", p, !want, want)
		}
	}
}
