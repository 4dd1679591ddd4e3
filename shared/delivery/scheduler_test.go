package delivery

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/delivery/deliverytest"
)

// jobs makes jobs from "org/id" names, in due order.
func jobs(names ...string) []Job {
	out := make([]Job, len(names))
	for i, n := range names {
		org, _, _ := strings.Cut(n, "/")
		out[i] = Job{OrgID: org, ID: n}
	}
	return out
}

func ids(js []Job) []string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = j.ID
	}
	return out
}

// One take of due jobs: organizations in turn from the one after the last served, at most perOrg
// running per organization, at most free in all, running jobs skipped.
func TestSchedulerTake(t *testing.T) {
	for _, tt := range []struct {
		name    string
		due     []Job
		free    int
		perOrg  int
		last    string         // the organization served last
		busy    map[string]int // running attempts per organization
		running []string       // running job ids
		want    []string
	}{
		{name: "one of each organization in turn, not oldest first",
			due: jobs("a/1", "a/2", "a/3", "b/1", "c/1"), free: 4, perOrg: 2,
			want: []string{"a/1", "b/1", "c/1", "a/2"}},
		{name: "at most free in all",
			due: jobs("a/1", "b/1", "c/1"), free: 2, perOrg: 2,
			want: []string{"a/1", "b/1"}},
		{name: "at most perOrg of one organization",
			due: jobs("a/1", "a/2", "a/3", "a/4"), free: 8, perOrg: 2,
			want: []string{"a/1", "a/2"}},
		{name: "running attempts count against perOrg",
			due: jobs("a/2", "a/3", "b/1"), free: 8, perOrg: 2, busy: map[string]int{"a": 1}, running: []string{"a/1"},
			want: []string{"a/2", "b/1"}},
		{name: "an organization at perOrg waits; the others go",
			due: jobs("a/3", "b/1", "b/2", "b/3"), free: 8, perOrg: 2, busy: map[string]int{"a": 2}, running: []string{"a/1", "a/2"},
			want: []string{"b/1", "b/2"}},
		{name: "the turn goes on after the organization served last",
			due: jobs("a/1", "b/1", "c/1"), free: 1, perOrg: 2, last: "a",
			want: []string{"b/1"}},
		{name: "after the last organization it wraps around",
			due: jobs("a/1", "b/1", "c/1"), free: 2, perOrg: 2, last: "c",
			want: []string{"a/1", "b/1"}},
		{name: "the last served has nothing due: the next one in order",
			due: jobs("a/1", "c/1"), free: 1, perOrg: 2, last: "b",
			want: []string{"c/1"}},
		{name: "a running job listed again is not taken twice",
			due: jobs("a/1", "a/2"), free: 8, perOrg: 3, busy: map[string]int{"a": 1}, running: []string{"a/1"},
			want: []string{"a/2"}},
		{name: "no free worker: nothing",
			due: jobs("a/1", "b/1"), free: 0, perOrg: 2,
			want: []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Scheduler{busy: map[string]int{}, ids: map[string]bool{}, last: tt.last}
			for o, n := range tt.busy {
				s.busy[o] = n
			}
			for _, id := range tt.running {
				s.ids[id] = true
			}
			got := s.take(tt.due, tt.free, tt.perOrg)
			if !slices.Equal(ids(got), tt.want) {
				t.Fatalf("take = %v, want %v", ids(got), tt.want)
			}
			// What it took is marked running.
			for _, j := range got {
				if !s.ids[j.ID] {
					t.Errorf("%s taken but not marked running", j.ID)
				}
			}
			for o, n := range s.busy {
				if n > tt.perOrg {
					t.Errorf("organization %s has %d running, more than %d", o, n, tt.perOrg)
				}
			}
		})
	}
}

// Over many takes of one worker each, organizations are served in turn however many jobs each
// has due, and done frees the organization's slot.
func TestSchedulerTakesTurnsOverTime(t *testing.T) {
	s := &Scheduler{busy: map[string]int{}, ids: map[string]bool{}}
	queue := jobs("a/1", "a/2", "a/3", "a/4", "a/5", "b/1", "b/2", "c/1")
	var served []string
	for len(queue) > 0 {
		got := s.take(queue, 1, PerOrganization)
		if len(got) != 1 {
			t.Fatalf("take with %v due = %v, want one job", ids(queue), ids(got))
		}
		served = append(served, got[0].ID)
		queue = slices.DeleteFunc(queue, func(j Job) bool { return j.ID == got[0].ID })
		s.done(got[0])
	}
	want := []string{"a/1", "b/1", "c/1", "a/2", "b/2", "a/3", "a/4", "a/5"}
	if !slices.Equal(served, want) {
		t.Fatalf("served %v, want %v", served, want)
	}
	if len(s.busy) != 0 || len(s.ids) != 0 {
		t.Fatalf("after every job is done: busy %v, running %v", s.busy, s.ids)
	}
}

// fakeQueue lists its pending jobs in due order (at most perOrg per organization, claimed ones
// not due) and holds each attempt until the test releases it.
type fakeQueue struct {
	mu                    sync.Mutex
	pending               []Job
	claimed               map[string]bool
	release               map[string]chan struct{}
	started               chan string
	perOrgNow, perOrgMost map[string]int
	now, most             int
}

func newFakeQueue(due []Job) *fakeQueue {
	q := &fakeQueue{pending: due, claimed: map[string]bool{}, release: map[string]chan struct{}{},
		started: make(chan string, len(due)), perOrgNow: map[string]int{}, perOrgMost: map[string]int{}}
	for _, j := range due {
		q.release[j.ID] = make(chan struct{})
	}
	return q
}

func (q *fakeQueue) Due(_ context.Context, _ time.Time, perOrg, limit int) ([]Job, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Job
	n := map[string]int{}
	for _, j := range q.pending {
		if q.claimed[j.ID] || n[j.OrgID] >= perOrg || len(out) >= limit {
			continue
		}
		n[j.OrgID]++
		out = append(out, j)
	}
	return out, nil
}

func (q *fakeQueue) Attempt(ctx context.Context, j Job) {
	q.mu.Lock()
	q.claimed[j.ID] = true
	q.now++
	q.most = max(q.most, q.now)
	q.perOrgNow[j.OrgID]++
	q.perOrgMost[j.OrgID] = max(q.perOrgMost[j.OrgID], q.perOrgNow[j.OrgID])
	q.mu.Unlock()
	q.started <- j.ID
	select {
	case <-q.release[j.ID]:
	case <-ctx.Done():
		return
	}
	q.mu.Lock()
	q.now--
	q.perOrgNow[j.OrgID]--
	q.pending = slices.DeleteFunc(q.pending, func(p Job) bool { return p.ID == j.ID })
	q.mu.Unlock()
}

// Run starts Workers attempts, organizations in turn, and each finished attempt frees a worker for
// the next organization in turn: the order of starts is fixed by the releases, not by timing.
func TestSchedulerRunServesOrganizationsInTurn(t *testing.T) {
	q := newFakeQueue(jobs("a/1", "a/2", "a/3", "a/4", "b/1", "b/2", "c/1", "c/2"))
	s := &Scheduler{Queue: q, Workers: 3, PerOrg: 2, Poll: time.Hour}
	deliverytest.RunUntilEnd(t, s.Run)

	next := func() string {
		t.Helper()
		select {
		case id := <-q.started:
			return id
		case <-time.After(30 * time.Second): // a hang guard, not a speed goal
			t.Fatal("no attempt started")
			return ""
		}
	}
	var first []string
	for range 3 {
		first = append(first, next())
	}
	slices.Sort(first)
	if want := []string{"a/1", "b/1", "c/1"}; !slices.Equal(first, want) {
		t.Fatalf("first attempts %v, want %v (one per organization, Workers in all)", first, want)
	}
	// Each release frees one worker, taken by the next organization in turn after the last served.
	for _, step := range []struct{ release, want string }{
		{"b/1", "a/2"}, // a has one running, below PerOrg
		{"a/1", "b/2"},
		{"c/1", "c/2"},
		{"a/2", "a/3"},
		{"b/2", "a/4"}, // only a has jobs left, and one running
	} {
		close(q.release[step.release])
		if got := next(); got != step.want {
			t.Fatalf("after %s ended, %s started; want %s", step.release, got, step.want)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.most > 3 || q.perOrgMost["a"] > 2 {
		t.Fatalf("at most %d attempts at once, %d of a; want at most 3 and 2", q.most, q.perOrgMost["a"])
	}
}
