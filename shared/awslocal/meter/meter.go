// Package meter counts what kiln aws-local's AWS calls would be billed: each call that passed
// aws-local's IAM check, by the principal that made it and its action, in the units AWS bills
// (awscost.Usage). Its HTTP handlers sit behind the IAM check of each stand-in; Lambda wraps a
// function's handler; Transitions takes the state machine's counts.
package meter

import (
	"sort"
	"sync"

	"github.com/kilnbuild/kiln/shared/awscost"
)

// Meter is the running count. The zero value is not usable: use New.
type Meter struct {
	mu sync.Mutex
	by map[string]*Principal
	// hostBuilds are the CodeBuild builds whose host time is counted.
	hostBuilds map[string]bool
}

// Principal is what one principal used: in AWS's units, and its calls by action
// ("dynamodb:PutItem", "s3:tier1", "lambda:run", ...).
type Principal struct {
	Usage awscost.Usage
	Calls map[string]float64
}

// New returns an empty meter.
func New() *Meter { return &Meter{by: map[string]*Principal{}, hostBuilds: map[string]bool{}} }

// Add counts one call of action by principal, which used u.
func (m *Meter) Add(principal, action string, u awscost.Usage) {
	if principal == "" {
		principal = "unknown"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.by[principal]
	if p == nil {
		p = &Principal{Calls: map[string]float64{}}
		m.by[principal] = p
	}
	p.Usage = p.Usage.Add(u)
	p.Calls[action]++
}

// Read returns what was counted so far.
func (m *Meter) Read() Reading {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(Reading, len(m.by))
	for name, p := range m.by {
		calls := make(map[string]float64, len(p.Calls))
		for a, n := range p.Calls {
			calls[a] = n
		}
		out[name] = Principal{Usage: p.Usage, Calls: calls}
	}
	return out
}

// Reading is the meter at one moment, by principal.
type Reading map[string]Principal

// Sub is the use between prev and r.
func (r Reading) Sub(prev Reading) Reading {
	out := Reading{}
	for name, p := range r {
		q := prev[name]
		calls := map[string]float64{}
		for a, n := range p.Calls {
			if d := n - q.Calls[a]; d != 0 {
				calls[a] = d
			}
		}
		out[name] = Principal{Usage: p.Usage.Sub(q.Usage), Calls: calls}
	}
	return out
}

// Scale is r with every amount multiplied by f (1/n: the share of one of n builds).
func (r Reading) Scale(f float64) Reading {
	out := Reading{}
	for name, p := range r {
		calls := map[string]float64{}
		for a, n := range p.Calls {
			calls[a] = n * f
		}
		out[name] = Principal{Usage: p.Usage.Scale(f), Calls: calls}
	}
	return out
}

// Without is r without the named principals.
func (r Reading) Without(names ...string) Reading {
	out := Reading{}
	for name, p := range r {
		out[name] = p
	}
	for _, n := range names {
		delete(out, n)
	}
	return out
}

// Total is the use of every principal of r.
func (r Reading) Total() awscost.Usage {
	var u awscost.Usage
	for _, p := range r {
		u = u.Add(p.Usage)
	}
	return u
}

// Spender is a principal and what its use costs.
type Spender struct {
	Name string
	Cost awscost.Cost
}

// Spenders are r's principals, the costliest first (ties by name).
func (r Reading) Spenders(prices awscost.Prices) []Spender {
	out := make([]Spender, 0, len(r))
	for name, p := range r {
		out = append(out, Spender{Name: name, Cost: prices.Cost(p.Usage)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cost.Total != out[j].Cost.Total {
			return out[i].Cost.Total > out[j].Cost.Total
		}
		return out[i].Name < out[j].Name
	})
	return out
}
