package live_test

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/live"
	"github.com/kilnbuild/kiln/shared/live/livetest"
)

func TestMemoryRegistry(t *testing.T) {
	livetest.RunRegistry(t, func(*testing.T) live.Registry { return live.NewMemory() })
}
