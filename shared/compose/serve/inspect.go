package serve

import (
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/store"
)

// Store is the running service's store: the SQLite database of its data directory, for writes
// the API does not offer (kiln admin opens the same database).
func (s *Service) Store() store.Store { return s.local.Store }

// WaitStatusesPosted returns once every GitHub commit status and check run queued so far is
// posted (at once without a GitHub App).
func (s *Service) WaitStatusesPosted() {
	if s.machine.statuses != nil {
		s.machine.statuses.Wait()
	}
}

// RetentionJanitor is a copy of the janitor that deletes artifacts past their retention, to run
// a sweep at another time (Now) than the service's own.
func (s *Service) RetentionJanitor() builds.Janitor { return *s.machine.janitor }

// SetPublicURL sets the base URL users and hosts reach kiln at, as KILN_PUBLIC_URL does: it no
// longer follows the listen address.
func (c *Config) SetPublicURL(u string) { c.PublicURL, c.publicURLFromAddr = u, false }

// LogWriter is the log writer the service's runners write through: lines appended here are
// stored and reach the sockets watching their build, as a build's own lines do.
func (s *Service) LogWriter() builds.LogWriter { return s.machine.core.LiveLogs(s.machine.logs) }
