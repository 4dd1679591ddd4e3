package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestBuildEnded(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	shooter := &kiln.Project{ID: "prj_1", Name: "Shooter", SourceControl: kiln.SourceGitHub, RepoLink: "acme/shooter"}
	linux := &kiln.BuildSetting{ID: "set_1", Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main", NotifyOnComplete: true}
	complete := func() *kiln.Build {
		return &kiln.Build{
			ID: "bld_42", ProjectID: "prj_1", BuildSettingID: "set_1", Status: kiln.StatusComplete,
			Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main", UEVersion: "5.3",
			Commit: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", CommitMessage: "Fix crash on load\n\nLonger body.",
			CreatedAt: t0, StartedAt: at(time.Minute), FinishedAt: at(13*time.Minute + 5*time.Second),
		}
	}
	user := kiln.User{ID: "usr_1", Email: "dev@example.com", Name: "Dev"}

	tests := []struct {
		name        string
		build       func() *kiln.Build
		project     *kiln.Project
		setting     *kiln.BuildSetting
		url         string
		subject     string
		contains    []string
		notContains []string
	}{
		{
			name: "complete with download", build: complete, project: shooter, setting: linux,
			url:     "https://artifacts.example.com/bld_42.tar.gz?X-Amz-Signature=abc",
			subject: "[kiln] Shooter · Linux Shipping · complete",
			contains: []string{
				"Build complete: Shooter · Linux Shipping\n",
				"Project:     Shooter\n", "Repository:  acme/shooter\n", "Setting:     Linux Shipping\n",
				"Branch:      main\n", "Engine:      UE 5.3\n", "Status:      complete\n", "Duration:    12m 5s\n",
				"Commit:      a1b2c3d Fix crash on load\n",
				"Download:    https://artifacts.example.com/bld_42.tar.gz?X-Amz-Signature=abc\n",
				"Build ID:    bld_42\n",
			},
			notContains: []string{"Reason:", "Longer body", "a1b2c3d4"},
		},
		{
			name: "numbered", project: shooter, setting: linux,
			build: func() *kiln.Build {
				b := complete()
				b.Number = 12
				return b
			},
			subject:  "[kiln] Shooter #12 · Linux Shipping · complete",
			contains: []string{"Build complete: Shooter #12 · Linux Shipping\n", "Build:       #12\n", "Build ID:    bld_42\n"},
		},
		{
			name: "numbered, project deleted", setting: linux,
			build: func() *kiln.Build {
				b := complete()
				b.Number = 3
				return b
			},
			subject:  "[kiln] deleted project #3 · Linux Shipping · complete",
			contains: []string{"Build:       #3\n"},
		},
		{
			name: "complete without a link", build: complete, project: shooter, setting: linux,
			subject:     "[kiln] Shooter · Linux Shipping · complete",
			contains:    []string{"Status:      complete\n", "Build ID:    bld_42\n"},
			notContains: []string{"Download:"},
		},
		{
			name: "failed with reason, link ignored", project: shooter, setting: linux, url: "https://x.example/should-not-show",
			build: func() *kiln.Build {
				b := complete()
				b.Status, b.FailureReason = kiln.StatusFailed, "RunUAT exited with code 25\r\nCook failed"
				b.FinishedAt = at(time.Minute + 45*time.Second)
				return b
			},
			subject: "[kiln] Shooter · Linux Shipping · failed",
			contains: []string{
				"Build failed: Shooter · Linux Shipping\n", "Status:      failed\n", "Duration:    45s\n",
				"Reason:      RunUAT exited with code 25\n             Cook failed\n",
			},
			notContains: []string{"Download:", "should-not-show"},
		},
		{
			name: "failed before it started", project: shooter, setting: linux,
			build: func() *kiln.Build {
				b := complete()
				b.Status, b.StartedAt, b.FinishedAt = kiln.StatusFailed, nil, at(time.Minute)
				b.FailureReason, b.Commit, b.CommitMessage = "no build host for UE 5.3", "", ""
				return b
			},
			subject:     "[kiln] Shooter · Linux Shipping · failed",
			contains:    []string{"Duration:    did not start\n", "Reason:      no build host for UE 5.3\n"},
			notContains: []string{"Commit:"},
		},
		{
			name: "perforce stream and changelist", setting: nil,
			project: &kiln.Project{ID: "prj_2", Name: "Racer", SourceControl: kiln.SourcePerforce, RepoLink: "//racer/main", StreamPath: "//racer/main"},
			build: func() *kiln.Build {
				b := complete()
				b.Platform, b.BuildType = kiln.PlatformWin64, kiln.BuildTypeDevelopment
				b.Branch, b.Commit, b.Changelist, b.CommitMessage = "//racer/main", "12345", "12345", "Tune handling"
				b.FinishedAt = at(2*time.Hour + time.Minute + 6*time.Second)
				return b
			},
			subject: "[kiln] Racer · Win64 Development · complete",
			contains: []string{
				"Repository:  //racer/main\n", "Stream:      //racer/main\n", "Changelist:  12345 Tune handling\n",
				"Duration:    2h 0m 6s\n",
			},
			notContains: []string{"Branch:", "Commit:"},
		},
		{
			name: "project and setting deleted", project: nil, setting: nil, build: complete,
			subject:     "[kiln] deleted project · Linux Shipping · complete",
			contains:    []string{"Project:     (deleted) prj_1\n", "Branch:      main\n", "Build ID:    bld_42\n"},
			notContains: []string{"Repository:"},
		},
		{
			name: "hostile values stay on their line", setting: linux,
			project: &kiln.Project{Name: "Evil\r\nBcc: victim@example.com", SourceControl: kiln.SourceGitHub, RepoLink: "a/b"},
			build: func() *kiln.Build {
				b := complete()
				b.CommitMessage = "\n\nsummary\twith tab"
				return b
			},
			subject:  "[kiln] Evil  Bcc: victim@example.com · Linux Shipping · complete",
			contains: []string{"Commit:      a1b2c3d summary with tab\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := BuildEnded(tt.build(), tt.project, tt.setting, user, tt.url)
			if m.To != "dev@example.com" {
				t.Errorf("To = %q", m.To)
			}
			if m.Subject != tt.subject {
				t.Errorf("Subject = %q, want %q", m.Subject, tt.subject)
			}
			if strings.ContainsAny(m.Subject, "\r\n") {
				t.Errorf("Subject has a line break: %q", m.Subject)
			}
			for _, s := range tt.contains {
				if !strings.Contains(m.Text, s) {
					t.Errorf("text lacks %q:\n%s", s, m.Text)
				}
			}
			for _, s := range tt.notContains {
				if strings.Contains(m.Text, s) {
					t.Errorf("text has %q:\n%s", s, m.Text)
				}
			}
		})
	}
}

func TestHumanDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{-time.Second, "0s"},
		{400 * time.Millisecond, "0s"},
		{1500 * time.Millisecond, "2s"},
		{45 * time.Second, "45s"},
		{time.Minute, "1m 0s"},
		{12*time.Minute + 5*time.Second, "12m 5s"},
		{time.Hour + 7*time.Second, "1h 0m 7s"},
		{26*time.Hour + 3*time.Minute, "26h 3m 0s"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			if got := HumanDuration(tt.d); got != tt.want {
				t.Errorf("HumanDuration(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}
