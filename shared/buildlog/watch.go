package buildlog

import (
	"sync"

	"github.com/kilnbuild/kiln/shared/wake"
)

// watchers wakes the readers waiting for new lines of a build.
type watchers struct {
	mu sync.Mutex
	m  map[string]map[*wake.Signal]struct{}
}

func (w *watchers) watch(key string) (<-chan struct{}, func()) {
	s := &wake.Signal{}
	w.mu.Lock()
	if w.m == nil {
		w.m = map[string]map[*wake.Signal]struct{}{}
	}
	if w.m[key] == nil {
		w.m[key] = map[*wake.Signal]struct{}{}
	}
	w.m[key][s] = struct{}{}
	w.mu.Unlock()
	return s.C(), func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.m[key], s)
		if len(w.m[key]) == 0 {
			delete(w.m, key)
		}
	}
}

func (w *watchers) notify(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for s := range w.m[key] {
		s.Notify()
	}
}
