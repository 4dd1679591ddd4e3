package iam

import (
	"fmt"
	"sort"
	"strings"
)

// Role is the role a principal acts as, and the statements of its identity policies.
type Role struct {
	LogicalID  string
	Statements []Statement
	// Unevaluated notes what of the role is not checked here: AWS managed policies (not in the
	// template, so they grant nothing here) and conditions whose operator is not evaluated on a
	// key a call sets (taken as holding). A condition on a key a call does not set is evaluated
	// as AWS does (conditionHolds).
	Unevaluated []string
}

// Roles returns the role of each principal the template has: every function of the stack by
// its name (api, task, ...), StateMachinePrincipal, CodeBuildPrincipal, EC2HostPrincipal (the
// Windows hosts) and EC2LinuxHostPrincipal (the Linux hosts, whose role the stack names
// LinuxHostRole).
func (t *Template) Roles() (map[string]*Role, error) {
	roleIDs := map[string]string{}
	for name, id := range t.Functions {
		if role := getAttID(dig(t.resources[id].Properties, "Role")); role != "" {
			roleIDs[name] = role
		}
	}
	ids := make([]string, 0, len(t.resources))
	for id := range t.resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := t.resources[id]
		switch r.Type {
		case "AWS::StepFunctions::StateMachine":
			setOnce(roleIDs, StateMachinePrincipal, getAttID(r.Properties["RoleArn"]))
		case "AWS::CodeBuild::Project":
			setOnce(roleIDs, CodeBuildPrincipal, getAttID(r.Properties["ServiceRole"]))
		case "AWS::IAM::InstanceProfile":
			if roles := asList(r.Properties["Roles"]); len(roles) == 1 {
				role, principal := firstRef(roles[0]), EC2HostPrincipal
				if strings.HasPrefix(role, "LinuxHostRole") {
					principal = EC2LinuxHostPrincipal
				}
				setOnce(roleIDs, principal, role)
			}
		}
	}
	out := map[string]*Role{}
	for principal, id := range roleIDs {
		if id == "" {
			continue
		}
		role, err := t.role(id)
		if err != nil {
			return nil, fmt.Errorf("the role of %s: %w", principal, err)
		}
		out[principal] = role
	}
	return out, nil
}

func setOnce(m map[string]string, k, v string) {
	if _, ok := m[k]; !ok && v != "" {
		m[k] = v
	}
}

// getAttID is X of {"Fn::GetAtt": [X, "Arn"]}.
func getAttID(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	switch a := m["Fn::GetAtt"].(type) {
	case []any:
		if len(a) > 0 {
			s, _ := a[0].(string)
			return s
		}
	case string:
		id, _, _ := strings.Cut(a, ".")
		return id
	}
	return ""
}

// role collects the statements of the role's policies: inline in the role, AWS::IAM::Policy
// and AWS::IAM::ManagedPolicy resources attached to it, and managed policies of the template it
// names.
func (t *Template) role(id string) (*Role, error) {
	r, ok := t.resources[id]
	if !ok || r.Type != "AWS::IAM::Role" {
		return nil, fmt.Errorf("%s is not a role of the template", id)
	}
	role := &Role{LogicalID: id}
	add := func(doc any, source string) error {
		resolved, err := t.Resolve(doc)
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		st, err := parseStatements(resolved, source)
		if err != nil {
			return err
		}
		role.Statements = append(role.Statements, st...)
		return nil
	}
	for i, p := range asList(r.Properties["Policies"]) {
		pm, _ := p.(map[string]any)
		if err := add(pm["PolicyDocument"], fmt.Sprintf("%s.Policies[%d]", id, i)); err != nil {
			return nil, err
		}
	}
	for _, m := range asList(r.Properties["ManagedPolicyArns"]) {
		ref := firstRef(m)
		if p, ok := t.resources[ref]; ok && p.Type == "AWS::IAM::ManagedPolicy" {
			if err := add(p.Properties["PolicyDocument"], ref); err != nil {
				return nil, err
			}
			continue
		}
		arn, err := t.Resolve(m)
		if err != nil {
			return nil, err
		}
		role.Unevaluated = append(role.Unevaluated, fmt.Sprintf("managed policy %v is not in the template: it grants nothing here", arn))
	}
	ids := make([]string, 0, len(t.resources))
	for pid := range t.resources {
		ids = append(ids, pid)
	}
	sort.Strings(ids)
	for _, pid := range ids {
		p := t.resources[pid]
		if p.Type != "AWS::IAM::Policy" && p.Type != "AWS::IAM::ManagedPolicy" {
			continue
		}
		for _, rr := range asList(p.Properties["Roles"]) {
			if firstRef(rr) == id {
				if err := add(p.Properties["PolicyDocument"], pid); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, s := range role.Statements {
		for op, keys := range s.Condition {
			if evaluated(op) {
				continue
			}
			for k := range keys {
				role.Unevaluated = append(role.Unevaluated, fmt.Sprintf("%s: condition %s on %s is taken as holding where a call sets the key (its operator is not evaluated here)", s.Source, op, k))
			}
		}
	}
	return role, nil
}
