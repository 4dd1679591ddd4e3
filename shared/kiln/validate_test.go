package kiln

import "testing"

func TestBuildSettingValidation(t *testing.T) {
	valid := func() BuildSetting {
		return BuildSetting{Platform: PlatformLinux, BuildType: BuildTypeShipping, UEVersion: "5.3", Trigger: TriggerManual, Branch: "main"}
	}
	tests := []struct {
		name   string
		source SourceControl
		change func(*BuildSetting)
		field  string // "" means valid
	}{
		{"valid github", SourceGitHub, func(*BuildSetting) {}, ""},
		{"valid perforce", SourcePerforce, func(s *BuildSetting) { s.Branch = ""; s.StreamPath = "//game/main" }, ""},
		{"valid scheduled", SourceGitHub, func(s *BuildSetting) { s.Trigger = TriggerScheduled; s.Schedule = "0 3 * * 1-5" }, ""},
		{"server build", SourceGitHub, func(s *BuildSetting) { s.BuildType = BuildTypeServer }, ""},
		{"three-part version", SourceGitHub, func(s *BuildSetting) { s.UEVersion = "5.3.2" }, ""},
		{"bad platform", SourceGitHub, func(s *BuildSetting) { s.Platform = "PS5" }, "platform"},
		{"platform case", SourceGitHub, func(s *BuildSetting) { s.Platform = "linux" }, "platform"},
		{"bad build type", SourceGitHub, func(s *BuildSetting) { s.BuildType = "Release" }, "buildType"},
		{"bad version", SourceGitHub, func(s *BuildSetting) { s.UEVersion = "5.x" }, "ueVersion"},
		{"four-part version", SourceGitHub, func(s *BuildSetting) { s.UEVersion = "5.3.2.1" }, "ueVersion"},
		{"bad trigger", SourceGitHub, func(s *BuildSetting) { s.Trigger = "hourly" }, "trigger"},
		{"github without branch", SourceGitHub, func(s *BuildSetting) { s.Branch = "" }, "branch"},
		{"branch option injection", SourceGitHub, func(s *BuildSetting) { s.Branch = "--upload-pack=x" }, "branch"},
		{"branch with space", SourceGitHub, func(s *BuildSetting) { s.Branch = "my branch" }, "branch"},
		{"github with stream", SourceGitHub, func(s *BuildSetting) { s.StreamPath = "//game/main" }, "streamPath"},
		{"perforce without stream", SourcePerforce, func(s *BuildSetting) { s.Branch = "" }, "streamPath"},
		{"bad stream", SourcePerforce, func(s *BuildSetting) { s.Branch = ""; s.StreamPath = "/game/main" }, "streamPath"},
		{"scheduled without schedule", SourceGitHub, func(s *BuildSetting) { s.Trigger = TriggerScheduled }, "schedule"},
		{"bad cron", SourceGitHub, func(s *BuildSetting) { s.Trigger = TriggerScheduled; s.Schedule = "every day" }, "schedule"},
		{"six-field cron", SourceGitHub, func(s *BuildSetting) { s.Trigger = TriggerScheduled; s.Schedule = "0 0 3 * * *" }, "schedule"},
		{"schedule on manual", SourceGitHub, func(s *BuildSetting) { s.Schedule = "0 3 * * *" }, "schedule"},
		{"auto deploy without url", SourceGitHub, func(s *BuildSetting) { s.AutoDeploy = true }, "uploadBuildUrl"},
		{"ftp url", SourceGitHub, func(s *BuildSetting) { s.UploadBuildURL = "ftp://host/x" }, "uploadBuildUrl"},
		{"url with credentials", SourceGitHub, func(s *BuildSetting) { s.UploadBuildURL = "https://u:p@host/x" }, "uploadBuildUrl"},
		{"uproject outside", SourceGitHub, func(s *BuildSetting) { s.UprojectPath = "../Game.uproject" }, "uprojectPath"},
		{"uproject absolute", SourceGitHub, func(s *BuildSetting) { s.UprojectPath = "/Game.uproject" }, "uprojectPath"},
		{"uproject nested", SourceGitHub, func(s *BuildSetting) { s.UprojectPath = "Games/Shooter/Shooter.uproject" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := valid()
			tt.change(&s)
			err := s.Validate(tt.source)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Code != EValidation || e.Fields[tt.field] == "" {
				t.Fatalf("want validation_failed on %s, got %#v", tt.field, err)
			}
		})
	}
}

func TestFormats(t *testing.T) {
	tests := []struct {
		name string
		fn   func(string) bool
		in   string
		want bool
	}{
		{"repo", ValidRepoFullName, "epic/shooter-game", true},
		{"repo dots", ValidRepoFullName, "epic/game.v2", true},
		{"repo without owner", ValidRepoFullName, "shooter", false},
		{"repo three parts", ValidRepoFullName, "a/b/c", false},
		{"depot stream", ValidDepotPath, "//game/main", true},
		{"depot line", ValidDepotPath, "//game/main/dev", true},
		{"depot too deep", ValidDepotPath, "//game/main/dev/x", false},
		{"depot wildcard", ValidDepotPath, "//game/...", false},
		{"email", ValidEmail, "dev@studio.example", true},
		{"email with name", ValidEmail, "Dev <dev@studio.example>", false},
		{"email missing at", ValidEmail, "dev.studio.example", false},
	}
	for _, tt := range tests {
		if got := tt.fn(tt.in); got != tt.want {
			t.Errorf("%s: %q = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{"Local": "local", "Second Studio!": "second-studio", "  --  ": "org", "Ünïcode Games": "n-code-games"} {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRoleMatrix(t *testing.T) {
	want := map[Role][]Action{
		RoleOwner:  {ActRead, ActWrite, ActAdmin, ActOwn},
		RoleAdmin:  {ActRead, ActWrite, ActAdmin},
		RoleMember: {ActRead, ActWrite},
		RoleViewer: {ActRead},
	}
	for _, r := range Roles {
		for _, a := range []Action{ActRead, ActWrite, ActAdmin, ActOwn} {
			allowed := false
			for _, w := range want[r] {
				allowed = allowed || w == a
			}
			if r.Allows(a) != allowed {
				t.Errorf("%s.Allows(%s) = %v, want %v", r, a, r.Allows(a), allowed)
			}
		}
	}
	if Role("root").Allows(ActRead) {
		t.Error("an unknown role may read")
	}
}
