package iam

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

// Authorizer knows each principal by its access key id and checks its calls.
type Authorizer struct {
	account string
	mu      sync.Mutex
	byKey   map[string]*Principal
	// denied counts the calls refused, for tests and logs.
	calls map[string]int
}

// Principal is one caller: its name (a function's, StateMachine, CodeBuild, EC2Host), the
// access key id it signs with, and its role's statements. A trusted principal (a service
// acting on a resource policy, such as EventBridge invoking a function) is not checked.
type Principal struct {
	Name, KeyID string
	ARN         string // arn:aws:sts::<account>:assumed-role/<role>/<session>
	role        *Role
	trusted     bool
	// also are calls AWS makes on the principal's behalf along with one of its calls (a
	// service integration's), keyed by the action that needs them.
	also map[string][]Call
}

// NewAuthorizer makes principals of the template's roles; keyID gives each principal's access
// key id, session its role session's name. The log gets one line per role listing what is not
// evaluated.
func NewAuthorizer(t *Template, keyID func(principal string) string, session func(principal string) string, logger *slog.Logger) (*Authorizer, error) {
	roles, err := t.Roles()
	if err != nil {
		return nil, err
	}
	a := &Authorizer{account: t.names.Account, byKey: map[string]*Principal{}, calls: map[string]int{}}
	names := make([]string, 0, len(roles))
	for n := range roles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		role := roles[name]
		p := &Principal{Name: name, KeyID: keyID(name), role: role,
			ARN: "arn:aws:sts::" + t.names.Account + ":assumed-role/" + role.LogicalID + "/" + session(name)}
		a.byKey[p.KeyID] = p
		if logger != nil {
			logger.Info("aws-local IAM: checking calls against the template's role", slog.String("principal", name),
				slog.String("role", role.LogicalID), slog.Int("statements", len(role.Statements)),
				slog.String("not_evaluated", strings.Join(role.Unevaluated, "; ")))
		}
	}
	if sm := a.Principal(keyID(StateMachinePrincipal)); sm != nil {
		// Step Functions' codebuild:startBuild.sync manages an EventBridge rule of its own for
		// the build's end, with the state machine's role (AWS's "IAM policies for AWS CodeBuild"
		// of Step Functions' developer guide).
		rule := "arn:aws:events:" + t.names.Region + ":" + t.names.Account + ":rule/StepFunctionsGetEventForCodeBuildStartBuildRule"
		sm.also = map[string][]Call{"codebuild:StartBuild": {
			{Action: "events:PutTargets", Resource: rule}, {Action: "events:PutRule", Resource: rule}, {Action: "events:DescribeRule", Resource: rule}}}
	}
	return a, nil
}

// Trust adds a principal whose calls are not checked (a service principal acting on a
// resource-based permission).
func (a *Authorizer) Trust(name, keyID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.byKey[keyID] = &Principal{Name: name, KeyID: keyID, ARN: name, trusted: true}
}

// Principal returns the principal of an access key id, or nil.
func (a *Authorizer) Principal(keyID string) *Principal {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byKey[keyID]
}

// Authorize checks every call of a request by the access key id's principal. It returns
// *UnknownKey for a key no principal has and *AccessDenied for the first call the principal's
// role does not allow.
func (a *Authorizer) Authorize(keyID string, calls ...Call) error {
	p := a.Principal(keyID)
	if p == nil {
		return &UnknownKey{KeyID: keyID}
	}
	a.mu.Lock()
	a.calls[p.Name] += 1
	a.mu.Unlock()
	if p.trusted {
		return nil
	}
	for _, c := range calls {
		for _, c := range append([]Call{c}, p.also[c.Action]...) {
			switch evaluate(p.role.Statements, c) {
			case allowed:
				continue
			case explicitDeny:
				return &AccessDenied{Principal: p.ARN, Name: p.Name, Action: c.Action, Resource: c.Resource, Explicit: true}
			default:
				return &AccessDenied{Principal: p.ARN, Name: p.Name, Action: c.Action, Resource: c.Resource}
			}
		}
	}
	return nil
}

// Requests returns how many requests each principal made.
func (a *Authorizer) Requests() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int, len(a.calls))
	for k, v := range a.calls {
		out[k] = v
	}
	return out
}

// AccessDenied is a call the principal's role does not allow.
type AccessDenied struct {
	Principal, Name, Action, Resource string
	Explicit                          bool
}

func (e *AccessDenied) Error() string {
	why := "because no identity-based policy allows the " + e.Action + " action"
	if e.Explicit {
		why = "with an explicit deny in an identity-based policy"
	}
	return fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s %s", e.Principal, e.Action, e.Resource, why)
}

// UnknownKey is a request signed with an access key id of no principal.
type UnknownKey struct{ KeyID string }

func (e *UnknownKey) Error() string {
	return "The security token included in the request is invalid (access key id " + strconvQuote(e.KeyID) + " belongs to no role of the stack)"
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }
