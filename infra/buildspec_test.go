package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/kilnbuild/kiln/infra/stack"
)

// buildspec is what the test reads of a CodeBuild buildspec.
type buildspec struct {
	Version string `yaml:"version"`
	RunAs   string `yaml:"run-as"`
	Env     struct {
		Variables map[string]string `yaml:"variables"`
	} `yaml:"env"`
	Phases map[string]struct {
		RunAs    string   `yaml:"run-as"`
		Commands []string `yaml:"commands"`
	} `yaml:"phases"`
}

// TestBuildspecRunsAsHostUser: CodeBuild runs a buildspec's commands as root unless run-as names
// another user, and Unreal refuses to run as root. The repository's buildspec and the stack's
// default both run as stack.HostUser, no phase goes back to root, and the work directory is the
// user's own (the image recipe in docs/deploy.md creates both).
func TestBuildspecRunsAsHostUser(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("..", buildspecFile))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{buildspecFile: string(file), "stack.DefaultBuildspec": stack.DefaultBuildspec} {
		t.Run(name, func(t *testing.T) {
			var spec buildspec
			if err := yaml.Unmarshal([]byte(text), &spec); err != nil {
				t.Fatal(err)
			}
			if spec.Version != "0.2" {
				t.Errorf("version %q, want 0.2", spec.Version)
			}
			if spec.RunAs == "" || spec.RunAs == "root" || spec.RunAs == "0" {
				t.Errorf("run-as %q: the commands would run as root", spec.RunAs)
			}
			if spec.RunAs != stack.HostUser {
				t.Errorf("run-as %q, want the image's user %q", spec.RunAs, stack.HostUser)
			}
			for phase, p := range spec.Phases {
				if p.RunAs != "" && p.RunAs != spec.RunAs {
					t.Errorf("phase %s runs as %q", phase, p.RunAs)
				}
			}
			if work := spec.Env.Variables["KILN_HOST_WORKDIR"]; !strings.HasPrefix(work, "/home/"+stack.HostUser+"/") {
				t.Errorf("KILN_HOST_WORKDIR %q, want a directory the user owns (under /home/%s)", work, stack.HostUser)
			}
		})
	}
}

// TestDeployDocsImageRecipe: the image recipe of docs/deploy.md creates the buildspec's user and
// gives it the work directory, and leaves the image as that user (never `USER root` last).
func TestDeployDocsImageRecipe(t *testing.T) {
	doc, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "    # Dockerfile\n")
	if start < 0 {
		t.Fatal("docs/deploy.md has no Dockerfile sketch")
	}
	recipe := text[start:]
	if end := strings.Index(recipe, "\n\n"); end > 0 {
		recipe = recipe[:end]
	}
	for what, re := range map[string]*regexp.Regexp{
		"creates the user":          regexp.MustCompile(`useradd [^\n]*\b` + stack.HostUser + `\b`),
		"gives it the work dir":     regexp.MustCompile(`chown [^\n]*` + stack.HostUser + `[^\n]*/home/` + stack.HostUser + `/work`),
		"ends as the non-root user": regexp.MustCompile(`USER ` + stack.HostUser + `\n[^U]*$`),
	} {
		if !re.MatchString(recipe + "\n") {
			t.Errorf("the image recipe does not %s (%s):\n%s", what, re, recipe)
		}
	}
	if strings.Contains(recipe, "USER root\n") && !strings.Contains(recipe[strings.LastIndex(recipe, "USER root"):], "USER "+stack.HostUser) {
		t.Errorf("the image recipe ends as root:\n%s", recipe)
	}
}
