package iam

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Names are aws-local's names of the stack's resources: the template's logical ids are resolved
// to them, so that a policy's Fn::GetAtt [Table, Arn] is the ARN aws-local's table has.
type Names struct {
	Region, Account string
	// Table, Bucket, Queue (the delivery queue), StateMachine, HostProject, WindowsGroup,
	// LinuxGroup and LiveAPI (the WebSocket API's id) name the resources the functions'
	// environment (KILN_DYNAMODB_TABLE, KILN_ARTIFACTS, KILN_DELIVERY_QUEUE_URL,
	// KILN_STATE_MACHINE_ARN, KILN_HOST_PROJECT, KILN_WINDOWS_HOST_GROUP, KILN_LINUX_HOST_GROUP,
	// KILN_LIVE_ENDPOINT) refers to.
	Table, Bucket, Queue, StateMachine, HostProject, WindowsGroup, LinuxGroup, LiveAPI string
}

// envResources says which resource each function environment variable names.
var envResources = map[string]func(Names) string{
	"KILN_DYNAMODB_TABLE":     func(n Names) string { return n.Table },
	"KILN_ARTIFACTS":          func(n Names) string { return n.Bucket },
	"KILN_DELIVERY_QUEUE_URL": func(n Names) string { return n.Queue },
	"KILN_STATE_MACHINE_ARN":  func(n Names) string { return n.StateMachine },
	"KILN_HOST_PROJECT":       func(n Names) string { return n.HostProject },
	"KILN_WINDOWS_HOST_GROUP": func(n Names) string { return n.WindowsGroup },
	"KILN_LINUX_HOST_GROUP":   func(n Names) string { return n.LinuxGroup },
	"KILN_LIVE_ENDPOINT":      func(n Names) string { return n.LiveAPI },
}

// Principals that are not functions.
const (
	StateMachinePrincipal = "states"    // the state machine's role
	CodeBuildPrincipal    = "codebuild" // the Linux build hosts' service role
	EC2HostPrincipal      = "ec2"       // the Windows hosts' instance role
	EC2LinuxHostPrincipal = "ec2linux"  // the Linux hosts' instance role
)

// Template is a synthesized CloudFormation template, its resources named as in aws-local.
type Template struct {
	names     Names
	resources map[string]resource
	resolved  map[string]*named // logical id → aws-local name and attributes
	// Functions maps a function's name (api, task, ...) to its logical id.
	Functions map[string]string
}

type resource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
}

type named struct {
	ref   string
	attrs map[string]string
}

// LoadTemplate reads a template file (cdk.out/<stack>.template.json).
func LoadTemplate(path string, n Names) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("iam: read the stack's template: %w", err)
	}
	t, err := ParseTemplate(data, n)
	if err != nil {
		return nil, fmt.Errorf("iam: %s: %w", path, err)
	}
	return t, nil
}

// functionID matches the logical id CDK gives a function of the stack (APIFunction1A2B3C4D).
var functionID = regexp.MustCompile(`^([A-Za-z]+)Function[0-9A-F]{8}$`)

// ParseTemplate reads a template's JSON.
func ParseTemplate(data []byte, n Names) (*Template, error) {
	var doc struct {
		Resources map[string]resource `json:"Resources"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a CloudFormation template: %w", err)
	}
	if len(doc.Resources) == 0 {
		return nil, fmt.Errorf("the template has no resources")
	}
	t := &Template{names: n, resources: doc.Resources, resolved: map[string]*named{}, Functions: map[string]string{}}
	chosen := map[string]string{} // logical id → aws-local name
	for id, r := range doc.Resources {
		if r.Type != "AWS::Lambda::Function" {
			continue
		}
		if m := functionID.FindStringSubmatch(id); m != nil {
			name := strings.ToLower(m[1])
			t.Functions[name] = id
			chosen[id] = name
		}
		vars, _ := dig(r.Properties, "Environment", "Variables").(map[string]any)
		for v, value := range vars {
			if f := envResources[v]; f != nil && f(n) != "" {
				if ref := firstRef(value); ref != "" {
					chosen[ref] = f(n)
				}
			}
		}
	}
	for id, r := range doc.Resources {
		name := chosen[id]
		if name == "" {
			name = id
		}
		t.resolved[id] = t.nameResource(r.Type, name)
	}
	return t, nil
}

// nameResource gives a resource of the type, named name, its Ref and attributes as AWS would.
func (t *Template) nameResource(typ, name string) *named {
	r, a := t.names.Region, t.names.Account
	arn := func(service, rest string) string { return "arn:aws:" + service + ":" + r + ":" + a + ":" + rest }
	switch typ {
	case "AWS::Lambda::Function":
		return &named{ref: name, attrs: map[string]string{"Arn": arn("lambda", "function:"+name)}}
	case "AWS::DynamoDB::Table":
		return &named{ref: name, attrs: map[string]string{"Arn": arn("dynamodb", "table/"+name), "StreamArn": arn("dynamodb", "table/"+name+"/stream/local")}}
	case "AWS::S3::Bucket":
		return &named{ref: name, attrs: map[string]string{"Arn": "arn:aws:s3:::" + name, "DomainName": name + ".s3.amazonaws.com",
			"RegionalDomainName": name + ".s3." + r + ".amazonaws.com"}}
	case "AWS::SQS::Queue":
		return &named{ref: "https://sqs." + r + ".amazonaws.com/" + a + "/" + name, attrs: map[string]string{"Arn": arn("sqs", name), "QueueName": name,
			"QueueUrl": "https://sqs." + r + ".amazonaws.com/" + a + "/" + name}}
	case "AWS::StepFunctions::StateMachine":
		return &named{ref: arn("states", "stateMachine:"+name), attrs: map[string]string{"Arn": arn("states", "stateMachine:"+name), "Name": name}}
	case "AWS::CodeBuild::Project":
		return &named{ref: name, attrs: map[string]string{"Arn": arn("codebuild", "project/"+name)}}
	case "AWS::IAM::Role":
		return &named{ref: name, attrs: map[string]string{"Arn": "arn:aws:iam::" + a + ":role/" + name, "RoleId": "AROA" + name}}
	case "AWS::IAM::InstanceProfile":
		return &named{ref: name, attrs: map[string]string{"Arn": "arn:aws:iam::" + a + ":instance-profile/" + name}}
	case "AWS::IAM::ManagedPolicy":
		return &named{ref: "arn:aws:iam::" + a + ":policy/" + name, attrs: map[string]string{}}
	case "AWS::SecretsManager::Secret":
		return &named{ref: arn("secretsmanager", "secret:"+name+"-AbCdEf"), attrs: map[string]string{"Id": arn("secretsmanager", "secret:"+name+"-AbCdEf")}}
	case "AWS::Logs::LogGroup":
		return &named{ref: name, attrs: map[string]string{"Arn": arn("logs", "log-group:"+name+":*")}}
	case "AWS::AutoScaling::AutoScalingGroup":
		return &named{ref: name, attrs: map[string]string{}}
	case "AWS::ECR::Repository":
		return &named{ref: name, attrs: map[string]string{"Arn": arn("ecr", "repository/"+name), "RepositoryUri": a + ".dkr.ecr." + r + ".amazonaws.com/" + name}}
	case "AWS::Events::Rule":
		return &named{ref: name, attrs: map[string]string{"Arn": arn("events", "rule/"+name)}}
	case "AWS::KMS::Key":
		return &named{ref: name, attrs: map[string]string{"Arn": arn("kms", "key/"+name), "KeyId": name}}
	case "AWS::SNS::Topic":
		return &named{ref: arn("sns", name), attrs: map[string]string{"TopicArn": arn("sns", name), "TopicName": name}}
	case "AWS::EC2::LaunchTemplate":
		return &named{ref: name, attrs: map[string]string{"LaunchTemplateId": name, "LatestVersionNumber": "1", "DefaultVersionNumber": "1"}}
	case "AWS::ApiGatewayV2::Api":
		return &named{ref: name, attrs: map[string]string{"ApiEndpoint": "https://" + name + ".execute-api." + r + ".amazonaws.com", "ApiId": name}}
	}
	// Any other resource: its name, and an ARN of its logical id that no statement of kiln's
	// names.
	return &named{ref: name, attrs: map[string]string{"Arn": arn("local", name)}}
}

// firstRef finds the first {"Ref": id} in a value.
func firstRef(v any) string {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["Ref"].(string); ok && len(v) == 1 {
			return ref
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if r := firstRef(v[k]); r != "" {
				return r
			}
		}
	case []any:
		for _, x := range v {
			if r := firstRef(x); r != "" {
				return r
			}
		}
	}
	return ""
}

func dig(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// Resolve resolves the intrinsic functions of a value (Ref, Fn::GetAtt, Fn::Join, Fn::Sub,
// Fn::Select, Fn::Split and the pseudo parameters) against aws-local's names.
func (t *Template) Resolve(v any) (any, error) {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			r, err := t.Resolve(x)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		if len(v) == 1 {
			for k, arg := range v {
				if k == "Ref" || strings.HasPrefix(k, "Fn::") {
					return t.intrinsic(k, arg)
				}
			}
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			r, err := t.Resolve(x)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

func (t *Template) intrinsic(fn string, arg any) (any, error) {
	switch fn {
	case "Ref":
		name, _ := arg.(string)
		return t.ref(name)
	case "Fn::GetAtt":
		var parts []string
		switch a := arg.(type) {
		case string:
			parts = strings.SplitN(a, ".", 2)
		case []any:
			for _, p := range a {
				s, _ := p.(string)
				parts = append(parts, s)
			}
		}
		if len(parts) != 2 {
			return nil, fmt.Errorf("Fn::GetAtt %v: want [logicalId, attribute]", arg)
		}
		return t.getAtt(parts[0], parts[1])
	case "Fn::Join":
		a, _ := arg.([]any)
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Join %v: want [delimiter, [values]]", arg)
		}
		sep, _ := a[0].(string)
		list, err := t.Resolve(a[1])
		if err != nil {
			return nil, err
		}
		items, ok := list.([]any)
		if !ok {
			return nil, fmt.Errorf("Fn::Join: %v is not a list", list)
		}
		var parts []string
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("Fn::Join: %v is not a string", it)
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, sep), nil
	case "Fn::Split":
		a, _ := arg.([]any)
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Split %v: want [delimiter, string]", arg)
		}
		sep, _ := a[0].(string)
		s, err := t.Resolve(a[1])
		if err != nil {
			return nil, err
		}
		str, ok := s.(string)
		if !ok {
			return nil, fmt.Errorf("Fn::Split: %v is not a string", s)
		}
		var out []any
		for _, p := range strings.Split(str, sep) {
			out = append(out, p)
		}
		return out, nil
	case "Fn::Select":
		a, _ := arg.([]any)
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Select %v: want [index, list]", arg)
		}
		idx, err := t.Resolve(a[0])
		if err != nil {
			return nil, err
		}
		var i int
		switch x := idx.(type) {
		case string:
			i, err = strconv.Atoi(x)
		case float64:
			i = int(x)
		}
		list, err2 := t.Resolve(a[1])
		items, ok := list.([]any)
		if err != nil || err2 != nil || !ok || i < 0 || i >= len(items) {
			return nil, fmt.Errorf("Fn::Select %v: no such item", arg)
		}
		return items[i], nil
	case "Fn::Sub":
		var tmpl string
		vars := map[string]any{}
		switch a := arg.(type) {
		case string:
			tmpl = a
		case []any:
			if len(a) != 2 {
				return nil, fmt.Errorf("Fn::Sub %v: want string or [string, variables]", arg)
			}
			tmpl, _ = a[0].(string)
			m, _ := a[1].(map[string]any)
			for k, v := range m {
				r, err := t.Resolve(v)
				if err != nil {
					return nil, err
				}
				vars[k] = r
			}
		}
		return t.sub(tmpl, vars)
	}
	return nil, fmt.Errorf("%s is not an intrinsic function aws-local resolves", fn)
}

var subVar = regexp.MustCompile(`\$\{([^}]*)\}`)

func (t *Template) sub(tmpl string, vars map[string]any) (string, error) {
	var err error
	out := subVar.ReplaceAllStringFunc(tmpl, func(m string) string {
		name := m[2 : len(m)-1]
		if strings.HasPrefix(name, "!") {
			return "${" + name[1:] + "}"
		}
		if v, ok := vars[name]; ok {
			s, _ := v.(string)
			return s
		}
		var v any
		var e error
		if id, attr, ok := strings.Cut(name, "."); ok {
			v, e = t.getAtt(id, attr)
		} else {
			v, e = t.ref(name)
		}
		if e != nil {
			err = e
			return ""
		}
		s, _ := v.(string)
		return s
	})
	return out, err
}

func (t *Template) ref(name string) (any, error) {
	switch name {
	case "AWS::Region":
		return t.names.Region, nil
	case "AWS::AccountId":
		return t.names.Account, nil
	case "AWS::Partition":
		return "aws", nil
	case "AWS::URLSuffix":
		return "amazonaws.com", nil
	case "AWS::StackName":
		return "kiln", nil
	case "AWS::StackId":
		return "arn:aws:cloudformation:" + t.names.Region + ":" + t.names.Account + ":stack/kiln/local", nil
	}
	r, ok := t.resolved[name]
	if !ok {
		return nil, fmt.Errorf("Ref %s: no such resource (parameters are not resolved)", name)
	}
	return r.ref, nil
}

func (t *Template) getAtt(id, attr string) (any, error) {
	r, ok := t.resolved[id]
	if !ok {
		return nil, fmt.Errorf("Fn::GetAtt %s.%s: no such resource", id, attr)
	}
	v, ok := r.attrs[attr]
	if !ok {
		return nil, fmt.Errorf("Fn::GetAtt %s.%s: aws-local does not know this attribute of a %s", id, attr, t.resources[id].Type)
	}
	return v, nil
}
