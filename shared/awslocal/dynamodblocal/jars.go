package dynamodblocal

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kilnbuild/kiln/shared/awslocal/repodeps"
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
	dir, err := repodeps.Install("install-dynamodb-local.sh")
	if err != nil {
		return "", fmt.Errorf("dynamodblocal: install DynamoDB Local (or set %s): %w", EnvJarDir, err)
	}
	return dir, nil
}
