package kiln

import (
	"strings"
	"testing"
)

func TestBuildLabel(t *testing.T) {
	cases := []struct {
		number int64
		want   string
	}{
		{0, "b0000000000000000000000001"},
		{1, "#1"},
		{1234, "#1234"},
	}
	for _, c := range cases {
		b := &Build{ID: "b0000000000000000000000001", Number: c.number}
		if got := b.Label(); got != c.want {
			t.Errorf("Label of number %d = %q, want %q", c.number, got, c.want)
		}
	}
}

func TestArtifactFileName(t *testing.T) {
	const id = "b0000000000000000000000001"
	cases := []struct {
		name    string
		project string
		number  int64
		want    string
	}{
		{"plain", "Shooter", 42, "Shooter-Linux-Shipping-42.tar.gz"},
		{"spaces and symbols", "My Game: Reloaded!", 7, "My_Game_Reloaded-Linux-Shipping-7.tar.gz"},
		{"path separators", "../../etc/passwd", 3, "etc_passwd-Linux-Shipping-3.tar.gz"},
		{"quotes and backslashes", `a"b\c`, 1, "a_b_c-Linux-Shipping-1.tar.gz"},
		{"non-ASCII", "Café Ünreal", 2, "Caf_nreal-Linux-Shipping-2.tar.gz"},
		{"hidden file", ".hidden", 5, "hidden-Linux-Shipping-5.tar.gz"},
		{"nothing left", "★★★", 9, id + ".tar.gz"},
		{"no project name", "", 9, id + ".tar.gz"},
		{"no number", "Shooter", 0, id + ".tar.gz"},
		{"long name", strings.Repeat("x", 200), 1, strings.Repeat("x", maxFileNameProject) + "-Linux-Shipping-1.tar.gz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &Build{ID: id, Number: c.number, Platform: PlatformLinux, BuildType: BuildTypeShipping}
			if got := b.ArtifactFileName(c.project); got != c.want {
				t.Errorf("ArtifactFileName(%q) = %q, want %q", c.project, got, c.want)
			}
		})
	}
}
