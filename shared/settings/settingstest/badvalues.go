// Package settingstest holds what the tests of every deployment that reads the settings table
// share.
package settingstest

import "github.com/kilnbuild/kiln/shared/settings"

// BadValues are, per kind of value, one its parser refuses: a deployment's test sets each
// setting it reads to its kind's bad value and expects an error naming the setting.
var BadValues = map[settings.Kind]string{
	settings.KindCount:         "0",
	settings.KindRate:          "-3",
	settings.KindDuration:      "soon",
	settings.KindDays:          "0d",
	settings.KindPublicURL:     "kiln.example",
	settings.KindHTTPBase:      "ftp://ghe.example",
	settings.KindSMTPURL:       "http://mail.example",
	settings.KindCIDRs:         "10.0.0.0/33",
	settings.KindPlansFile:     "/nonexistent/plans.json",
	settings.KindAppID:         "kiln",
	settings.KindArtifactStore: "s3://x",
	settings.KindSize:          "10 parsecs",
	settings.KindSignUp:        "open",
}
