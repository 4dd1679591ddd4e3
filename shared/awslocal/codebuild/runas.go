package codebuild

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// RunAs is the user a project's builds run their command as, as a buildspec's run-as makes
// CodeBuild do (without it CodeBuild runs the commands as root). Here a user name is not looked
// up in /etc/passwd: each build takes a uid the stand-in owns for its duration (Take, e.g. a free
// uid of KILN_BUILD_UIDS under the sandbox's cross-process lock), used as uid and gid, and its
// work directory is given to that uid. It applies only when the stand-in runs as root.
type RunAs struct {
	// User is the buildspec's run-as (for the log: the uid stands for it).
	User string
	// Take holds a uid for one build; release gives it back when the build's command has ended.
	Take func() (uid int, release func(), err error)
}

// RunAsOf reads a buildspec's run-as: "" when it has none (the commands then run as root).
func RunAsOf(buildspec []byte) (string, error) {
	var spec struct {
		RunAs string `yaml:"run-as"`
	}
	if err := yaml.Unmarshal(buildspec, &spec); err != nil {
		return "", fmt.Errorf("codebuild: read the buildspec: %w", err)
	}
	return spec.RunAs, nil
}
