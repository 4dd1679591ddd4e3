package kiln

import (
	"strings"
	"testing"
)

// TestSettingNames: settings are named Platform/BuildType, with @branch where two of a project
// share it; a name resolves to its one setting, any case of the platform and type, and a name
// several share is an error that lists them.
func TestSettingNames(t *testing.T) {
	settings := []*BuildSetting{
		{ID: "s1", Platform: PlatformLinux, BuildType: BuildTypeShipping, Branch: "main"},
		{ID: "s2", Platform: PlatformLinux, BuildType: BuildTypeShipping, Branch: "release"},
		{ID: "s3", Platform: PlatformWin64, BuildType: BuildTypeDevelopment, Branch: "main"},
		{ID: "s4", Platform: PlatformLinux, BuildType: BuildTypeDevelopment, StreamPath: "//depot/main"},
	}
	names := SettingNames(settings)
	want := map[string]string{"s1": "Linux/Shipping@main", "s2": "Linux/Shipping@release", "s3": "Win64/Development", "s4": "Linux/Development"}
	for id, n := range want {
		if names[id] != n {
			t.Errorf("name of %s: %q, want %q", id, names[id], n)
		}
	}
	tests := []struct {
		ref, wantID, wantCode string
		wantIn                []string // in the error's message
	}{
		{ref: "s2", wantID: "s2"},
		{ref: "Win64/Development", wantID: "s3"},
		{ref: "win64/development", wantID: "s3"},
		{ref: "Win64/Development@main", wantID: "s3"},
		{ref: "Linux/Shipping@release", wantID: "s2"},
		{ref: "Linux/Development@//depot/main", wantID: "s4"},
		{ref: "Linux/Shipping", wantCode: EValidation, wantIn: []string{"Linux/Shipping@main (s1)", "Linux/Shipping@release (s2)"}},
		{ref: "Linux/Shipping@Main", wantCode: ENotFound},
		{ref: "Mac/Shipping", wantCode: ENotFound},
		{ref: "", wantCode: ENotFound},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got, err := ResolveSetting(settings, tt.ref)
			if tt.wantCode != "" {
				if !IsCode(err, tt.wantCode) {
					t.Fatalf("got %v, %v; want %s", got, err, tt.wantCode)
				}
				for _, s := range tt.wantIn {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not name %q", err, s)
					}
				}
				return
			}
			if err != nil || got.ID != tt.wantID {
				t.Fatalf("got %v, %v; want %s", got, err, tt.wantID)
			}
		})
	}
}
