package stack_test

import (
	"encoding/json"
	"regexp"
	"sort"
	"testing"
)

// cdkID matches a logical id CDK made of a construct id: the id and 8 hex digits.
var cdkID = regexp.MustCompile(`^(.+)[0-9A-F]{8}$`)

// idOf returns the logical id of the resource of the type made from the construct id.
func idOf(t *testing.T, typ, constructID string) string {
	t.Helper()
	var ids []string
	for id := range resources(t, typ) {
		if m := cdkID.FindStringSubmatch(id); m != nil && m[1] == constructID {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("%s %s: want 1 resource, got %v", typ, constructID, ids)
	}
	return ids[0]
}

func secretID(t *testing.T, constructID string) string {
	return idOf(t, "AWS::SecretsManager::Secret", constructID)
}

func queueID(t *testing.T, constructID string) string {
	return idOf(t, "AWS::SQS::Queue", constructID)
}

// functionConstructIDs are the construct ids of the functions (stack.Functions).
var functionConstructIDs = map[string]string{
	"api": "APIFunction", "task": "TaskFunction", "ended": "EndedFunction",
	"schedule": "ScheduleFunction", "deliver": "DeliverFunction", "admin": "AdminFunction", "live": "LiveFunction",
}

// httpAPIID is the logical id of the HTTP API (the WebSocket API, LiveAPI, is the stack's other
// AWS::ApiGatewayV2::Api).
func httpAPIID(t *testing.T) string {
	return idOf(t, "AWS::ApiGatewayV2::Api", "HttpAPI")
}

func functionLogicalID(t *testing.T, name string) string {
	return idOf(t, "AWS::Lambda::Function", functionConstructIDs[name])
}

// roleOf returns the logical id of the role of a function.
func roleOf(t *testing.T, name string) string {
	t.Helper()
	fn := resources(t, "AWS::Lambda::Function")[functionLogicalID(t, name)]
	role, ok := fn["Properties"].(obj)["Role"].(obj)["Fn::GetAtt"].([]any)
	if !ok {
		t.Fatalf("function %s: no role of this stack", name)
	}
	return role[0].(string)
}

// statement is one Allow statement of an identity policy, its actions and resources as lists.
type statement struct {
	actions   []string
	resources []any
	condition any
}

// roleStatements returns the Allow statements of the policies attached to the role (inline in
// the role, or AWS::IAM::Policy resources naming it).
func roleStatements(t *testing.T, role string) []statement {
	t.Helper()
	var docs []any
	r := resources(t, "AWS::IAM::Role")[role]
	if r == nil {
		t.Fatalf("no role %s", role)
	}
	for _, p := range asList(r["Properties"].(obj)["Policies"]) {
		docs = append(docs, p.(obj)["PolicyDocument"])
	}
	for _, p := range resources(t, "AWS::IAM::Policy") {
		for _, rr := range asList(p["Properties"].(obj)["Roles"]) {
			if ref, ok := rr.(obj)["Ref"]; ok && ref == role {
				docs = append(docs, p["Properties"].(obj)["PolicyDocument"])
			}
		}
	}
	var out []statement
	for _, d := range docs {
		for _, s := range asList(d.(obj)["Statement"]) {
			s := s.(obj)
			if s["Effect"] != "Allow" {
				continue
			}
			st := statement{resources: asList(s["Resource"]), condition: s["Condition"]}
			for _, a := range asList(s["Action"]) {
				st.actions = append(st.actions, a.(string))
			}
			sort.Strings(st.actions)
			out = append(out, st)
		}
	}
	return out
}

// actionsOf returns every action the role is allowed, sorted.
func actionsOf(t *testing.T, role string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range roleStatements(t, role) {
		for _, a := range s.actions {
			seen[a] = true
		}
	}
	var out []string
	for a := range seen {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// asList returns v as a list: a JSON policy field holds one value or a list of them.
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

func jsonMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
