package kiln

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// PlanLimits is what a plan allows. A zero number means unlimited.
type PlanLimits struct {
	// BuildMinutesPerMonth is the build minutes an organization may use per calendar month (UTC).
	BuildMinutesPerMonth int64 `json:"buildMinutesPerMonth"`
	// ConcurrentBuilds is how many of the organization's builds may run at once on the
	// service's hosts. For enterprise it is the default of organizations whose own
	// MaxConcurrentBuilds is unset (0).
	ConcurrentBuilds int `json:"concurrentBuilds"`
	// Projects is how many projects the organization may have.
	Projects int `json:"projects"`
	// Perforce and AutoDeploy say whether Perforce credentials and auto deploy may be set up.
	Perforce   bool `json:"perforce"`
	AutoDeploy bool `json:"autoDeploy"`
	// LiveConnections is how many sockets of live build events the organization may have
	// connected at once.
	LiveConnections int `json:"liveConnections"`
}

// PlanTable holds the limits of every plan.
type PlanTable map[Plan]PlanLimits

// DefaultPlans are the plans' limits unless the operator overrides them (KILN_PLANS).
func DefaultPlans() PlanTable {
	return PlanTable{
		PlanFree:       {BuildMinutesPerMonth: 300, ConcurrentBuilds: 1, Projects: 1, LiveConnections: 20},
		PlanPro:        {Perforce: true, AutoDeploy: true, LiveConnections: 200},
		PlanEnterprise: {Perforce: true, AutoDeploy: true, LiveConnections: 2000},
	}
}

// Limits are the limits of org's plan, with an enterprise organization's own concurrency.
func (t PlanTable) Limits(org *Organization) PlanLimits {
	l, ok := t[org.Plan]
	if !ok {
		l = t[PlanFree] // an unknown plan gets the least
	}
	if org.Plan == PlanEnterprise && org.MaxConcurrentBuilds > 0 {
		l.ConcurrentBuilds = org.MaxConcurrentBuilds
	}
	return l
}

// LoadPlans reads a plan table override (KILN_PLANS) from a JSON file: an object whose keys are
// plans and whose values give some or all of that plan's limits, e.g.
// {"free": {"buildMinutesPerMonth": 600}}. What the file leaves out keeps its default. Unknown
// plans or fields, negative numbers and wrong types are errors that name the place.
func LoadPlans(path string) (PlanTable, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ParsePlans(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParsePlans is LoadPlans on the file's contents.
func ParsePlans(raw []byte) (PlanTable, error) {
	var file map[string]json.RawMessage
	if err := json.Unmarshal(raw, &file); err != nil {
		return nil, fmt.Errorf("not a JSON object of plans: %w", err)
	}
	t := DefaultPlans()
	for name, body := range file {
		plan := Plan(name)
		if !plan.Valid() {
			return nil, fmt.Errorf("unknown plan %q (plans: free, pro, enterprise)", name)
		}
		l := t[plan]
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("plan %s: %w", name, err)
		}
		switch {
		case l.BuildMinutesPerMonth < 0:
			return nil, fmt.Errorf("plan %s: buildMinutesPerMonth must be 0 (unlimited) or more", name)
		case l.ConcurrentBuilds < 0:
			return nil, fmt.Errorf("plan %s: concurrentBuilds must be 0 (unlimited) or more", name)
		case l.Projects < 0:
			return nil, fmt.Errorf("plan %s: projects must be 0 (unlimited) or more", name)
		case l.LiveConnections < 0:
			return nil, fmt.Errorf("plan %s: liveConnections must be 0 (unlimited) or more", name)
		}
		t[plan] = l
	}
	return t, nil
}

// UsageMonth is the calendar month (UTC) of t as YYYY-MM: the month a build that ended at t is
// counted in.
func UsageMonth(t time.Time) string { return t.UTC().Format("2006-01") }

// ParseUsageMonth checks a YYYY-MM month.
func ParseUsageMonth(s string) (string, bool) {
	t, err := time.Parse("2006-01", s)
	if err != nil || t.Year() < 2000 || t.Format("2006-01") != s {
		return "", false
	}
	return s, true
}

// BuildMinutes is the build minutes of a build that ran from started to finished: the
// wall-clock time, rounded up to whole minutes (a build that ran at all counts at least one).
func BuildMinutes(started, finished time.Time) int64 {
	d := finished.Sub(started)
	if d <= 0 {
		return 0
	}
	return int64((d + time.Minute - 1) / time.Minute)
}

// Usage is what an organization used in one calendar month (UTC), as the store keeps it.
type Usage struct {
	Month string
	// Minutes are the build minutes of the builds that ended in the month, by platform.
	Minutes map[Platform]int64
	// Skipped counts the triggers skipped because the allowance was used up, by trigger.
	Skipped map[Trigger]int64
}

// TotalMinutes adds up the minutes of every platform.
func (u *Usage) TotalMinutes() int64 {
	var n int64
	for _, m := range u.Minutes {
		n += m
	}
	return n
}

// PlanLimitError is the plan_limit_reached error of an organization on plan for limit (a
// sentence fragment such as "300 build minutes per month").
func PlanLimitError(plan Plan, format string, args ...any) *Error {
	return Errorf(EPlanLimitReached, "the %s plan allows %s", plan, fmt.Sprintf(format, args...))
}

// SkippedTrigger is a push or scheduled trigger that started no build because the
// organization's build minutes were used up.
type SkippedTrigger struct {
	OrganizationID, ProjectID, BuildSettingID string
	Trigger                                   Trigger
	TriggeredBy                               string
	// Branch is the branch or stream, Commit the commit or changelist, when the trigger named one.
	Branch, Commit string
	// Reason says which limit, and the plan.
	Reason string
	At     time.Time
}

// ErrorMessage is the message of err's *Error, or err's text.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
