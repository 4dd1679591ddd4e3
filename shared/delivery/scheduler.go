package delivery

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/wake"
)

// Defaults of a Scheduler (no setting changes them; the per-organization concurrency is fixed).
const (
	// DefaultWorkers is how many attempts run at once in one process, across organizations.
	DefaultWorkers = 8
	// PerOrganization is how many attempts of one organization run at once: one organization's
	// slow or dead receiver holds at most this many workers, and every other organization's due
	// deliveries are taken in turn beside it.
	PerOrganization = 2
	// DefaultPoll is how often a Scheduler looks for due deliveries without being woken; retries
	// are due at stored times, so this bounds how late one starts.
	DefaultPoll = time.Second
)

// Job is one due delivery, as a queue lists it.
type Job struct {
	OrgID string
	ID    string
	// Ref is what else the queue needs to find the delivery (a webhook id), or empty.
	Ref string
}

// Queue is a delivery queue kept in the store.
type Queue interface {
	// Due lists deliveries due at now, earliest first, at most perOrg of each organization and
	// limit in all.
	Due(ctx context.Context, now time.Time, perOrg, limit int) ([]Job, error)
	// Attempt makes one attempt of a job and records its outcome: done, failed, or the next
	// attempt's due time. It claims the attempt first (a conditional write), so a job listed to
	// two workers or processes is attempted once.
	Attempt(ctx context.Context, job Job)
}

// Scheduler runs a Queue's due attempts: organizations take turns (round robin among those with
// due deliveries), at most PerOrg attempts of one organization and Workers in all run at once, and
// nothing sleeps between retries: a failed attempt's retry is a due time in the store.
type Scheduler struct {
	Queue   Queue
	Workers int           // DefaultWorkers when < 1
	PerOrg  int           // PerOrganization when < 1
	Poll    time.Duration // DefaultPoll when <= 0
	Now     func() time.Time
	Logger  *slog.Logger

	wake wake.Signal
	mu   sync.Mutex
	busy map[string]int  // running attempts per organization
	ids  map[string]bool // running jobs
	last string          // the organization served last: the turn goes on after it
}

// Notify wakes the scheduler: a delivery became due.
func (s *Scheduler) Notify() { s.wake.Notify() }

// Run takes due jobs until ctx ends, then waits for the attempts under way (they end with ctx).
func (s *Scheduler) Run(ctx context.Context) {
	workers, perOrg, poll := s.Workers, s.PerOrg, s.Poll
	if workers < 1 {
		workers = DefaultWorkers
	}
	if perOrg < 1 {
		perOrg = PerOrganization
	}
	if poll <= 0 {
		poll = DefaultPoll
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	s.mu.Lock()
	s.busy, s.ids = map[string]int{}, map[string]bool{}
	s.mu.Unlock()
	var running sync.WaitGroup
	defer running.Wait()
	for ctx.Err() == nil {
		s.mu.Lock()
		free := workers - len(s.ids)
		s.mu.Unlock()
		if free > 0 {
			jobs, err := s.Queue.Due(ctx, now(), perOrg, 100)
			if err != nil && ctx.Err() == nil && s.Logger != nil {
				s.Logger.ErrorContext(ctx, "list due deliveries", slog.String("error", err.Error()))
			}
			for _, j := range s.take(jobs, free, perOrg) {
				running.Go(func() {
					defer s.done(j)
					s.Queue.Attempt(ctx, j)
				})
			}
		}
		select {
		case <-ctx.Done():
		case <-s.wake.C():
		case <-time.After(poll):
		}
	}
}

// take picks up to free jobs, organizations in turn from the one after the last served, skipping
// running jobs and organizations with perOrg attempts running, and marks them running.
func (s *Scheduler) take(jobs []Job, free, perOrg int) []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	byOrg := map[string][]Job{}
	var orgs []string
	for _, j := range jobs {
		if s.ids[j.ID] {
			continue
		}
		if _, ok := byOrg[j.OrgID]; !ok {
			orgs = append(orgs, j.OrgID)
		}
		byOrg[j.OrgID] = append(byOrg[j.OrgID], j)
	}
	slices.Sort(orgs)
	// Start after the organization served last, wrapping around.
	start, _ := slices.BinarySearch(orgs, s.last+"\x00")
	orgs = append(orgs[start:], orgs[:start]...)
	var out []Job
	for progress := true; progress && len(out) < free; {
		progress = false
		for _, o := range orgs {
			if len(out) == free {
				break
			}
			if len(byOrg[o]) == 0 || s.busy[o] >= perOrg {
				continue
			}
			j := byOrg[o][0]
			byOrg[o] = byOrg[o][1:]
			s.busy[o]++
			s.ids[j.ID] = true
			s.last = o
			out = append(out, j)
			progress = true
		}
	}
	return out
}

// done marks a job's attempt ended and wakes the loop: a worker is free.
func (s *Scheduler) done(j Job) {
	s.mu.Lock()
	delete(s.ids, j.ID)
	if s.busy[j.OrgID]--; s.busy[j.OrgID] <= 0 {
		delete(s.busy, j.OrgID)
	}
	s.mu.Unlock()
	s.Notify()
}
