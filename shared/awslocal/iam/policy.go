// Package iam checks the AWS calls of kiln aws-local against the IAM policies the deployed stack
// gives each caller: the synthesized CloudFormation template's roles and their identity policies
// (inline in the role, AWS::IAM::Policy resources attached to it, AWS::IAM::ManagedPolicy
// resources of the template), with their intrinsic functions resolved against aws-local's own
// resource names. Each caller (a function, the state machine, a build host) signs its requests
// with an access key id of its own; the stand-ins map a request to the IAM actions and resources
// AWS would authorize and refuse what the caller's role does not allow, in the error shape of the
// service's protocol.
package iam

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Call is one IAM authorization a request needs: an action (service:Action) on a resource (an
// ARN, or * for actions without resource types), with the condition keys the request sets.
type Call struct {
	Action   string
	Resource string
	// Context holds condition keys the request sets (e.g. cloudwatch:namespace).
	Context map[string]string
}

// Statement is one statement of an identity policy, its intrinsics resolved.
type Statement struct {
	Sid          string
	Deny         bool
	Actions      []string // Action, or NotAction when NotActions
	NotActions   bool
	Resources    []string // Resource, or NotResource when NotResources
	NotResources bool
	Condition    map[string]map[string][]string // operator → key → values
	// Source names where the statement comes from (the policy's logical id), for messages.
	Source string
}

// decision is what the statements say of one call.
type decision int

const (
	implicitDeny decision = iota
	allowed
	explicitDeny
)

// evaluate applies IAM's rule to the statements: an explicit deny wins, then any allow; nothing
// matching denies. A statement's conditions are evaluated as conditionHolds says.
func evaluate(statements []Statement, c Call) decision {
	d := implicitDeny
	for _, s := range statements {
		if !s.matches(c) {
			continue
		}
		if s.Deny {
			return explicitDeny
		}
		d = allowed
	}
	return d
}

func (s Statement) matches(c Call) bool {
	if anyMatch(s.Actions, c.Action, true) == s.NotActions {
		return false
	}
	if anyMatch(s.Resources, c.Resource, false) == s.NotResources {
		return false
	}
	for op, keys := range s.Condition {
		for key, values := range keys {
			if held, known := conditionHolds(op, key, values, c.Context); known && !held {
				return false
			}
		}
	}
	return true
}

func anyMatch(patterns []string, v string, foldCase bool) bool {
	for _, p := range patterns {
		if foldCase {
			if Match(strings.ToLower(p), strings.ToLower(v)) {
				return true
			}
		} else if Match(p, v) {
			return true
		}
	}
	return false
}

// conditionHolds evaluates one condition key of a statement against the keys the call sets, as
// AWS's "IAM JSON policy elements: Condition operators" says
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html):
//
//   - "If the key that you specify in a policy condition is not present in the request context,
//     the values do not match and the condition is false. If the policy condition requires that
//     the key is not matched, such as StringNotLike or ArnNotLike, and the right key is not
//     present, the condition is true. This logic applies to all condition operators except
//     ...IfExists and Null check."
//   - ...IfExists: "If the policy key is present in the context of the request, process the key
//     as specified in the policy. If the key is not present, evaluate the condition element as
//     true."
//   - Null: true ("the key is null") holds when the key is absent, false when it is present.
//   - the set operators on a key the request does not set: ForAllValues holds, ForAnyValue does
//     not ("Conditions with multiple context keys or values").
//
// A key the call sets is evaluated by the operators of evaluatedOperators; known is false for any
// other operator (the condition is then taken as holding, and the role's Unevaluated says so).
func conditionHolds(op, key string, values []string, ctx map[string]string) (held, known bool) {
	v, present := lookup(ctx, key)
	set, op, _ := cutSetOperator(op)
	if op == "Null" {
		wantAbsent := len(values) > 0 && strings.EqualFold(values[0], "true")
		return wantAbsent != present, true
	}
	base, ifExists := strings.CutSuffix(op, "IfExists")
	if !present {
		switch {
		case ifExists || set == "ForAllValues":
			return true, true
		case set == "ForAnyValue":
			return false, true
		}
		return negated(base), true
	}
	anyOf := func(f func(p string) bool) bool {
		for _, p := range values {
			if f(p) {
				return true
			}
		}
		return false
	}
	switch base {
	case "StringEquals", "ArnEquals":
		return anyOf(func(p string) bool { return p == v }), true
	case "StringEqualsIgnoreCase":
		return anyOf(func(p string) bool { return strings.EqualFold(p, v) }), true
	case "StringNotEquals", "ArnNotEquals":
		return !anyOf(func(p string) bool { return p == v }), true
	case "StringNotEqualsIgnoreCase":
		return !anyOf(func(p string) bool { return strings.EqualFold(p, v) }), true
	case "StringLike", "ArnLike":
		return anyOf(func(p string) bool { return Match(p, v) }), true
	case "StringNotLike", "ArnNotLike":
		return !anyOf(func(p string) bool { return Match(p, v) }), true
	case "Bool":
		return anyOf(func(p string) bool { return strings.EqualFold(p, v) }), true
	}
	return false, false
}

// lookup finds a condition key in the keys a call sets; key names are not case-sensitive.
func lookup(ctx map[string]string, key string) (string, bool) {
	if v, ok := ctx[strings.ToLower(key)]; ok {
		return v, true
	}
	for k, v := range ctx {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// evaluatedOperators are the operators conditionHolds evaluates on a key the call sets (with or
// without IfExists).
var evaluatedOperators = map[string]bool{"StringEquals": true, "StringNotEquals": true, "StringEqualsIgnoreCase": true,
	"StringNotEqualsIgnoreCase": true, "StringLike": true, "StringNotLike": true, "ArnEquals": true, "ArnNotEquals": true,
	"ArnLike": true, "ArnNotLike": true, "Bool": true, "Null": true}

// evaluated reports whether conditionHolds evaluates the operator on a key the call sets.
func evaluated(op string) bool {
	_, op, _ = cutSetOperator(op)
	base, _ := strings.CutSuffix(op, "IfExists")
	return evaluatedOperators[base]
}

// cutSetOperator splits a set operator's qualifier (ForAllValues:, ForAnyValue:) off an operator.
func cutSetOperator(op string) (set, rest string, ok bool) {
	if set, rest, ok = strings.Cut(op, ":"); ok {
		return set, rest, true
	}
	return "", op, false
}

// negated reports whether an operator holds where its values do not match (StringNotEquals,
// StringNotLike, ArnNotLike, NumericNotEquals, DateNotEquals, NotIpAddress, ...): on a key the
// request does not set, such a condition is true.
func negated(op string) bool {
	return strings.Contains(op, "Not")
}

// Match reports whether v matches the IAM pattern p: * is any run of characters (also : and /),
// ? is one character.
func Match(p, v string) bool {
	// Iterative wildcard match with backtracking to the last *.
	pi, vi, star, mark := 0, 0, -1, 0
	for vi < len(v) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == v[vi]):
			pi++
			vi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, vi
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			vi = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// parseStatements reads a policy document whose intrinsics are resolved.
func parseStatements(doc any, source string) ([]Statement, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: the policy document is not an object", source)
	}
	var out []Statement
	for i, raw := range asList(m["Statement"]) {
		sm, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: statement %d is not an object", source, i)
		}
		s := Statement{Source: source}
		s.Sid, _ = sm["Sid"].(string)
		switch sm["Effect"] {
		case "Allow":
		case "Deny":
			s.Deny = true
		default:
			return nil, fmt.Errorf("%s: statement %d: Effect %v is neither Allow nor Deny", source, i, sm["Effect"])
		}
		var err error
		if s.Actions, s.NotActions, err = either(sm, "Action", "NotAction"); err != nil {
			return nil, fmt.Errorf("%s: statement %d: %w", source, i, err)
		}
		if s.Resources, s.NotResources, err = either(sm, "Resource", "NotResource"); err != nil {
			return nil, fmt.Errorf("%s: statement %d: %w", source, i, err)
		}
		if c, ok := sm["Condition"].(map[string]any); ok {
			s.Condition = map[string]map[string][]string{}
			for op, keys := range c {
				km, _ := keys.(map[string]any)
				s.Condition[op] = map[string][]string{}
				for k, v := range km {
					s.Condition[op][k] = stringList(asList(v))
				}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func either(m map[string]any, name, notName string) ([]string, bool, error) {
	if v, ok := m[name]; ok {
		return stringList(asList(v)), false, nil
	}
	if v, ok := m[notName]; ok {
		return stringList(asList(v)), true, nil
	}
	return nil, false, fmt.Errorf("neither %s nor %s", name, notName)
}

func stringList(vs []any) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		default:
			b, _ := json.Marshal(v)
			out = append(out, string(b)) // an unresolved value: matches nothing
		}
	}
	return out
}

func asList(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	default:
		return []any{v}
	}
}
