package serve

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServeLinksNoAWSComposition: kiln serve's composition root (this package, without its tests)
// links neither the Lambdas' composition root (awsapp) nor kiln aws-local's (awslocalapp) nor
// aws-local's stand-ins: each deployment is wired in its own package.
func TestServeLinksNoAWSComposition(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave too little to judge: %q", out)
	}
	forbidden := []string{
		"github.com/kilnbuild/kiln/shared/compose/awsapp",
		"github.com/kilnbuild/kiln/shared/compose/awslocalapp",
		"github.com/kilnbuild/kiln/shared/awslocal",
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("kiln serve's composition links %s", d)
			}
		}
	}
}
