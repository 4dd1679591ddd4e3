package app

import (
	"io"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/settings"
	"github.com/kilnbuild/kiln/shared/settings/settingstest"
)

// TestServeSettingsFollowTheTable: kiln serve reads each setting the shared table marks for it,
// with the table's default and meaning, none it marks for the AWS functions only, and refuses a
// bad value of each with an error naming it.
func TestServeSettingsFollowTheTable(t *testing.T) {
	serve := map[string]setting{}
	for _, s := range serveSettings {
		serve[s.env] = s
	}
	for _, r := range settings.Table {
		s, ok := serve[r.Name]
		if r.ReadBy&settings.Serve == 0 {
			if ok {
				t.Errorf("%s: kiln serve reads it, the table says only %v do", r.Name, r.ReadBy)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: the table marks it for kiln serve, which does not read it", r.Name)
			continue
		}
		if s.def != r.Default || s.usage != r.Help {
			t.Errorf("%s: kiln serve's default %q and meaning %q differ from the table's %q, %q", r.Name, s.def, s.usage, r.Default, r.Help)
		}
		bad, ok := settingstest.BadValues[r.Kind]
		if !ok {
			continue
		}
		_, err := LoadConfig(nil, func(k string) string {
			if k == r.Name {
				return bad
			}
			return ""
		}, io.Discard)
		if err == nil || !strings.HasPrefix(err.Error(), r.Name+":") {
			t.Errorf("%s=%q: error %v, want one naming it", r.Name, bad, err)
		}
	}
}
