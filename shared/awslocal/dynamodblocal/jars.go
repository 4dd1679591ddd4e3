package dynamodblocal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kilnbuild/kiln/shared/settings"
)

// EnvJarDir names a directory holding DynamoDBLocal.jar, for InstalledJarDir.
var EnvJarDir = settings.DynamoDBLocalDir.Name

// InstalledJarDir finds DynamoDB Local's jars for Options.JarDir, for tests and tools run inside
// the repository: $KILN_DYNAMODB_LOCAL_DIR, else the copy scripts/install-dynamodb-local.sh keeps
// under <repo>/.cache, running the script when it is missing (the repository is the directory
// holding go.mod above the working directory).
func InstalledJarDir() (string, error) {
	if dir := settings.DynamoDBLocalDir.Get(os.Getenv); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err != nil {
			return "", fmt.Errorf("dynamodblocal: %s=%s holds no DynamoDBLocal.jar: %w", EnvJarDir, dir, err)
		}
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "scripts", "install-dynamodb-local.sh")
	cmd := exec.Command(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("dynamodblocal: install DynamoDB Local with %s (or set %s): %w", script, EnvJarDir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// repoRoot walks up from the working directory to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("dynamodblocal: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("dynamodblocal: no go.mod above the working directory; set " + EnvJarDir)
		}
		dir = parent
	}
}
