package awslocalapp

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kilnbuild/kiln/shared/awslocal/codebuild"
	"github.com/kilnbuild/kiln/shared/sandbox"
)

// hostRunAs is the user the CodeBuild stand-in runs the hosts as: the run-as of the buildspec of
// the template's CodeBuild project (the stack's buildspec/buildspec.yml), each build on a uid of
// KILN_BUILD_UIDS of its own; nil when the buildspec has none (the hosts run as aws-local's user,
// as CodeBuild runs commands as root). When aws-local runs as root the hosts then need to read,
// as a user that is neither owner nor group, what they run: readable lists those paths, and each
// must be reachable by others (o+x on its directories, o+r on it).
func hostRunAs(templatePath string, uids sandbox.UIDRange, readable ...string) (*codebuild.RunAs, error) {
	data, err := os.ReadFile(templatePath)
	if err != nil {
		return nil, fmt.Errorf("aws-local: the hosts' buildspec: %w", err)
	}
	var tpl struct {
		Resources map[string]struct {
			Type       string
			Properties struct {
				Source struct{ BuildSpec any }
			}
		}
	}
	if err := json.Unmarshal(data, &tpl); err != nil {
		return nil, fmt.Errorf("aws-local: the hosts' buildspec: %s: %w", templatePath, err)
	}
	user := ""
	for _, r := range tpl.Resources {
		spec, ok := r.Properties.Source.BuildSpec.(string)
		if r.Type != "AWS::CodeBuild::Project" || !ok {
			continue
		}
		if user, err = codebuild.RunAsOf([]byte(spec)); err != nil {
			return nil, fmt.Errorf("aws-local: the hosts' buildspec in %s: %w", templatePath, err)
		}
	}
	if user == "" {
		return nil, nil
	}
	if os.Geteuid() == 0 {
		for _, p := range readable {
			if err := othersCanRead(p); err != nil {
				return nil, fmt.Errorf("aws-local: the build hosts run as the buildspec's run-as user %s (a uid of KILN_BUILD_UIDS), which cannot read %s: %w; "+
					"make it readable by others (o+r, and o+x on its directories)", user, p, err)
			}
		}
	}
	return &codebuild.RunAs{User: user, Take: uids.Take}, nil
}

// othersCanRead reports why a user who is neither owner nor group cannot read path (a directory:
// list and enter it) or reach it.
func othersCanRead(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return err
	}
	need := os.FileMode(0o004)
	if fi.IsDir() {
		need |= 0o001
	}
	if fi.Mode().Perm()&need != need {
		return fmt.Errorf("its mode is %v", fi.Mode().Perm())
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("its directory %s is %v (others cannot enter it)", dir, fi.Mode().Perm())
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// hostReadable are the files a host runs or reads from its image: its command, the engines, the
// p4 client and bwrap (those found; a missing one is the host's own error).
func hostReadable(cfg Settings, command string) []string {
	var paths []string
	for _, p := range []string{command, cfg.P4, cfg.Bwrap} {
		if p == "" {
			continue
		}
		if found, err := exec.LookPath(p); err == nil {
			paths = append(paths, found)
		}
	}
	if _, err := os.Stat(cfg.Engines); err == nil {
		paths = append(paths, cfg.Engines)
	}
	return paths
}
