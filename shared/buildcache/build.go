package buildcache

import "github.com/kilnbuild/kiln/shared/kiln"

// KeyOf is the key of the cache a build restores and saves: its organization, project, branch
// (a Perforce build's stream), platform and engine version. The server derives it from the
// build it stores, so a build host never names another organization's cache.
func KeyOf(b *kiln.Build) Key {
	return Key{Org: b.OrganizationID, Project: b.ProjectID, Ref: b.Branch, Platform: string(b.Platform), Engine: b.UEVersion}
}
