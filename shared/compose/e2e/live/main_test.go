// Package live tests live build events (Socket.IO at /socket.io/) on both deployments with the
// stock socket.io-client from npm.
package live

import (
	"os"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }
