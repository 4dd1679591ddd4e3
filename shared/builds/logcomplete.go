package builds

import (
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// LogSettle is how long after a build ended its log may still grow: a build stopped by a cancel
// or a supersede gets its last lines, and the line saying why it ended, once its runner has
// stopped the engine (which may take its kill grace) and flushed.
const LogSettle = 30 * time.Second

// LogComplete reports whether b's log is whole, given its last line (empty when it has none):
// the build ended and either completed (its runner wrote everything before completing), its
// log ends with the line saying why it ended, or it ended more than LogSettle ago.
func LogComplete(b *kiln.Build, lastLine string, now time.Time) bool {
	switch {
	case !b.Status.Terminal():
		return false
	case b.Status == kiln.StatusComplete:
		return true
	case strings.HasPrefix(lastLine, endFailed) || strings.HasPrefix(lastLine, endSuperseded):
		return true
	}
	return b.FinishedAt != nil && now.Sub(*b.FinishedAt) > LogSettle
}
