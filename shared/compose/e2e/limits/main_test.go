package limits

import (
	"os"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }
