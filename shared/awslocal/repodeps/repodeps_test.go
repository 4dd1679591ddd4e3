package repodeps

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRoot: the repository is the nearest directory above the working directory with go.mod.
func TestRoot(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("Root() = %s, which holds no go.mod: %v", root, err)
	}
	if _, err := os.Stat(filepath.Join(root, "scripts", "install-minio.sh")); err != nil {
		t.Fatalf("Root() = %s, which is not kiln's repository: %v", root, err)
	}
}

// TestInstallReportsTheMissingScript: a script the repository lacks is an error naming it.
func TestInstallReportsTheMissingScript(t *testing.T) {
	if _, err := Install("install-nothing-such.sh"); err == nil {
		t.Fatal("Install of a missing script: no error")
	}
}
