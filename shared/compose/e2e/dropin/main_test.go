// Package dropin is the suite written from the public documentation of the build service kiln's
// contract copies: its requests and webhook receivers as that documentation shows them, with only
// the base URL and the token changed, run against kiln serve and kiln aws-local.
package dropin

import (
	"os"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }
