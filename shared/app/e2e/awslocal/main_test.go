package awslocal

import (
	"os"
	"testing"

	"github.com/kilnbuild/kiln/shared/app/apptest"
)

func TestMain(m *testing.M) { os.Exit(apptest.Main(m)) }
