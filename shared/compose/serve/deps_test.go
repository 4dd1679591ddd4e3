package serve

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/deptest"
)

// TestServeLinksNoAWSComposition: kiln serve's composition root (this package, without its tests)
// links neither the Lambdas' composition root (awsapp) nor kiln aws-local's (awslocalapp) nor
// aws-local's stand-ins: each deployment is wired in its own package.
func TestServeLinksNoAWSComposition(t *testing.T) {
	for _, d := range deptest.Linked(t, ".",
		"github.com/kilnbuild/kiln/shared/compose/awsapp",
		"github.com/kilnbuild/kiln/shared/compose/awslocalapp",
		"github.com/kilnbuild/kiln/shared/awslocal") {
		t.Errorf("kiln serve's composition links %s", d)
	}
}
