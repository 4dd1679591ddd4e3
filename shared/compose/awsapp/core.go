package awsapp

import (
	"github.com/kilnbuild/kiln/shared/compose/core"
	"github.com/kilnbuild/kiln/shared/github"
)

// coreSettings are the settings of an AWS function the build core reads. Commit statuses are
// posted inline: a Lambda may be frozen as soon as it answers.
func (c AWSConfig) coreSettings() core.Settings {
	return core.Settings{
		Plans: c.Plans, PublicURL: c.PublicURL, SMTPURL: c.SMTPURL, SMTPFrom: c.SMTPFrom,
		OutboundAllow: c.OutboundAllow, RateLimit: c.RateLimit, StatusesInline: true, CacheMaxPerOrg: c.CacheMaxPerOrg,
	}
}

// coreSettings are those of the functions that deliver (deliver, schedule): with the delivery
// attempts and backoff.
func (c BackgroundConfig) coreSettings() core.Settings {
	s := c.AWSConfig.coreSettings()
	s.DeliveryAttempts, s.DeliveryBackoff = c.DeliveryAttempts, c.DeliveryBackoff
	return s
}

// githubClient is the App's client, nil without an App.
func githubClient(gh *GitHubApp) *github.Client {
	if gh == nil {
		return nil
	}
	return gh.Client
}
