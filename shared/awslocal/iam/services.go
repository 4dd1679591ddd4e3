package iam

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// Service maps a request of one AWS service's API to the IAM calls it needs, and answers a
// refusal in that service's protocol.
type Service interface {
	// Calls returns the calls the request needs; body is the request's body (read up to the
	// service's limit).
	Calls(r *http.Request, body []byte) ([]Call, error)
	// Deny answers a refused request.
	Deny(w http.ResponseWriter, err error)
}

// ARNs makes the ARNs of aws-local's resources.
type ARNs struct{ Region, Account string }

func (a ARNs) arn(service, rest string) string {
	return "arn:aws:" + service + ":" + a.Region + ":" + a.Account + ":" + rest
}

// jsonTarget reads the operation of a JSON-protocol request from X-Amz-Target ("Prefix.Op").
func jsonTarget(r *http.Request, prefix string) (string, error) {
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), prefix+".")
	if !ok || op == "" {
		return "", fmt.Errorf("not an operation of %s: X-Amz-Target %q", prefix, r.Header.Get("X-Amz-Target"))
	}
	return op, nil
}

// DynamoDB maps DynamoDB's JSON 1.0 API: dynamodb:<Operation> on the table (and index) the
// request names; batch and transaction operations need the item actions on each of their
// tables.
type DynamoDB struct{ ARNs }

func (d DynamoDB) table(name string) string { return d.arn("dynamodb", "table/"+name) }

func (d DynamoDB) Calls(r *http.Request, body []byte) ([]Call, error) {
	op, err := jsonTarget(r, "DynamoDB_20120810")
	if err != nil {
		return nil, err
	}
	var in struct {
		TableName     string
		IndexName     string
		RequestItems  map[string]json.RawMessage
		TransactItems []map[string]struct{ TableName string }
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, fmt.Errorf("dynamodb %s: %w", op, err)
		}
	}
	switch op {
	case "ListTables":
		return []Call{{Action: "dynamodb:ListTables", Resource: "*"}}, nil
	case "BatchGetItem", "BatchWriteItem":
		var out []Call
		for _, t := range sortedKeys(in.RequestItems) {
			out = append(out, Call{Action: "dynamodb:" + op, Resource: d.table(t)})
		}
		return out, nil
	case "TransactWriteItems", "TransactGetItems":
		actions := map[string]string{"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}
		var out []Call
		for _, item := range in.TransactItems {
			for kind, v := range item {
				a, ok := actions[kind]
				if !ok {
					return nil, fmt.Errorf("dynamodb %s: unknown item kind %s", op, kind)
				}
				out = append(out, Call{Action: "dynamodb:" + a, Resource: d.table(v.TableName)})
			}
		}
		return out, nil
	}
	if in.TableName == "" {
		return nil, fmt.Errorf("dynamodb %s: no TableName", op)
	}
	res := d.table(in.TableName)
	if in.IndexName != "" {
		res += "/index/" + in.IndexName
	}
	return []Call{{Action: "dynamodb:" + op, Resource: res}}, nil
}

func (DynamoDB) Deny(w http.ResponseWriter, err error) {
	denyJSON(w, "application/x-amz-json-1.0", "com.amazonaws.dynamodb.v20120810#", err)
}

// StepFunctions maps Step Functions' JSON 1.0 API: the execution operations on the state
// machine or execution ARN; the task token operations (SendTask*) on the state machine whose
// task issued the token (aws-local's one: StateMachineARN), which is what a grant of them names.
type StepFunctions struct{ StateMachineARN string }

func (s StepFunctions) Calls(r *http.Request, body []byte) ([]Call, error) {
	op, err := jsonTarget(r, "AWSStepFunctions")
	if err != nil {
		return nil, err
	}
	var in struct{ StateMachineArn, ExecutionArn string }
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, fmt.Errorf("states %s: %w", op, err)
		}
	}
	action := "states:" + op
	switch op {
	case "StartExecution", "StartSyncExecution", "DescribeStateMachine", "ListExecutions":
		return []Call{{Action: action, Resource: in.StateMachineArn}}, nil
	case "StopExecution", "DescribeExecution", "GetExecutionHistory":
		return []Call{{Action: action, Resource: in.ExecutionArn}}, nil
	case "SendTaskHeartbeat", "SendTaskSuccess", "SendTaskFailure":
		return []Call{{Action: action, Resource: s.StateMachineARN}}, nil
	}
	return nil, fmt.Errorf("states %s: aws-local maps no IAM action for it", op)
}

func (StepFunctions) Deny(w http.ResponseWriter, err error) {
	denyJSON(w, "application/x-amz-json-1.0", "", err)
}

// CodeBuild maps CodeBuild's JSON 1.1 API: StartBuild, StopBuild and BatchGetBuilds on the
// project of the build.
type CodeBuild struct{ ARNs }

func (c CodeBuild) Calls(r *http.Request, body []byte) ([]Call, error) {
	op, err := jsonTarget(r, "CodeBuild_20161006")
	if err != nil {
		return nil, err
	}
	var in struct {
		ProjectName string   `json:"projectName"`
		ID          string   `json:"id"`
		IDs         []string `json:"ids"`
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, fmt.Errorf("codebuild %s: %w", op, err)
		}
	}
	project := func(buildID string) string {
		p, _, _ := strings.Cut(buildID, ":")
		return c.arn("codebuild", "project/"+p)
	}
	switch op {
	case "StartBuild":
		return []Call{{Action: "codebuild:StartBuild", Resource: c.arn("codebuild", "project/"+in.ProjectName)}}, nil
	case "StopBuild":
		return []Call{{Action: "codebuild:StopBuild", Resource: project(in.ID)}}, nil
	case "BatchGetBuilds":
		var out []Call
		seen := map[string]bool{}
		for _, id := range in.IDs {
			if p := project(id); !seen[p] {
				seen[p] = true
				out = append(out, Call{Action: "codebuild:BatchGetBuilds", Resource: p})
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("codebuild %s: aws-local maps no IAM action for it", op)
}

func (CodeBuild) Deny(w http.ResponseWriter, err error) {
	denyJSON(w, "application/x-amz-json-1.1", "", err)
}

// SQS maps SQS's JSON protocol: sqs:<Operation> on the queue of QueueUrl.
type SQS struct{ ARNs }

func (s SQS) Calls(r *http.Request, body []byte) ([]Call, error) {
	op, err := jsonTarget(r, "AmazonSQS")
	if err != nil {
		return nil, err
	}
	var in struct{ QueueUrl string }
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, fmt.Errorf("sqs %s: %w", op, err)
		}
	}
	u, err := url.Parse(in.QueueUrl)
	if err != nil || in.QueueUrl == "" {
		return nil, fmt.Errorf("sqs %s: no QueueUrl", op)
	}
	name := u.Path[strings.LastIndex(u.Path, "/")+1:]
	action := "sqs:" + strings.TrimSuffix(op, "Batch") // SendMessageBatch is authorized as SendMessage
	return []Call{{Action: action, Resource: s.arn("sqs", name)}}, nil
}

func (SQS) Deny(w http.ResponseWriter, err error) {
	denyJSON(w, "application/x-amz-json-1.0", "com.amazonaws.sqs#", err)
}

// SSM maps Parameter Store's JSON 1.1 API: ssm:<Operation> on each parameter the request names
// (arn:aws:ssm:<region>:<account>:parameter/<name without its leading slash>); GetParameters
// needs the action on every name. KMS is not checked: a SecureString of the AWS managed key
// (aws/ssm) is decrypted for any principal of the account that may read the parameter.
type SSM struct{ ARNs }

func (s SSM) Calls(r *http.Request, body []byte) ([]Call, error) {
	op, err := jsonTarget(r, "AmazonSSM")
	if err != nil {
		return nil, err
	}
	var in struct {
		Name  string
		Names []string
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, fmt.Errorf("ssm %s: %w", op, err)
		}
	}
	names := in.Names
	if op != "GetParameters" {
		names = []string{in.Name}
	}
	var out []Call
	for _, n := range names {
		if n == "" {
			return nil, fmt.Errorf("ssm %s: no parameter name", op)
		}
		out = append(out, Call{Action: "ssm:" + op, Resource: s.arn("ssm", "parameter/"+strings.TrimPrefix(n, "/"))})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("ssm %s: no parameter name", op)
	}
	return out, nil
}

func (SSM) Deny(w http.ResponseWriter, err error) {
	denyJSON(w, "application/x-amz-json-1.1", "", err)
}

// Lambda maps the Invoke API (POST /2015-03-31/functions/<name>/invocations): lambda:InvokeFunction
// on the function.
type Lambda struct{ ARNs }

func (l Lambda) Calls(r *http.Request, _ []byte) ([]Call, error) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/2015-03-31/functions/")
	name, ok2 := strings.CutSuffix(rest, "/invocations")
	if !ok || !ok2 {
		return nil, fmt.Errorf("lambda: no function in %s", r.URL.Path)
	}
	if n, err := url.PathUnescape(name); err == nil {
		name = n
	}
	if i := strings.LastIndex(name, ":function:"); i >= 0 {
		name = name[i+len(":function:"):]
	}
	return []Call{{Action: "lambda:InvokeFunction", Resource: l.arn("lambda", "function:"+name)}}, nil
}

func (Lambda) Deny(w http.ResponseWriter, err error) {
	status, code := http.StatusForbidden, "AccessDeniedException"
	if _, ok := err.(*UnknownKey); ok {
		code = "UnrecognizedClientException"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"Type": "User", "Message": err.Error()})
}

// ManageConnections maps a WebSocket API's @connections API (POST, GET and DELETE
// /<stage>/@connections/<connection id>, as apigatewaymanagementapi calls it):
// execute-api:ManageConnections on arn:aws:execute-api:<region>:<account>:<api id>/<stage>/<method>/@connections/<connection id>,
// the ARN AWS's "Control access to WebSocket APIs with IAM authorization" gives it.
type ManageConnections struct {
	ARNs
	APIID string
}

func (m ManageConnections) Calls(r *http.Request, _ []byte) ([]Call, error) {
	stage, id, err := ConnectionPath(r.URL)
	if err != nil {
		return nil, err
	}
	return []Call{{Action: "execute-api:ManageConnections",
		Resource: m.arn("execute-api", m.APIID+"/"+stage+"/"+r.Method+"/@connections/"+id)}}, nil
}

// ConnectionPath reads the stage and the connection id of an @connections request's path
// (/<stage>/@connections/<id>, the id URL-encoded; "@" may come encoded too).
func ConnectionPath(u *url.URL) (stage, id string, err error) {
	p := strings.Replace(u.EscapedPath(), "/%40connections/", "/@connections/", 1)
	stage, rest, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/@connections/")
	if !ok || stage == "" || rest == "" || strings.Contains(stage, "/") || strings.Contains(rest, "/") {
		return "", "", fmt.Errorf("execute-api: %s is not /<stage>/@connections/<connection id>", u.EscapedPath())
	}
	if id, err = url.PathUnescape(rest); err != nil {
		return "", "", fmt.Errorf("execute-api: connection id %q: %w", rest, err)
	}
	return stage, id, nil
}

// Deny answers a refusal as the @connections API does: 403 ForbiddenException.
func (ManageConnections) Deny(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", "ForbiddenException")
	w.WriteHeader(http.StatusForbidden)
	json.NewEncoder(w).Encode(map[string]string{"message": err.Error()})
}

// AutoScaling maps Auto Scaling's query API: autoscaling:<Action> on the group (one group: the
// Windows hosts'; an instance's group is that group).
type AutoScaling struct {
	ARNs
	Group string
}

func (a AutoScaling) Calls(r *http.Request, body []byte) ([]Call, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("autoscaling: %w", err)
	}
	op := form.Get("Action")
	if op == "" {
		return nil, fmt.Errorf("autoscaling: no Action")
	}
	group := cmpOr(form.Get("AutoScalingGroupName"), a.Group)
	res := a.arn("autoscaling", "autoScalingGroup:00000000-0000-0000-0000-000000000000:autoScalingGroupName/"+group)
	if strings.HasPrefix(op, "Describe") {
		res = "*" // Describe actions have no resource types
	}
	return []Call{{Action: "autoscaling:" + op, Resource: res}}, nil
}

func (AutoScaling) Deny(w http.ResponseWriter, err error) {
	code := "AccessDenied"
	if _, ok := err.(*UnknownKey); ok {
		code = "InvalidClientTokenId"
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusForbidden)
	type e struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	xml.NewEncoder(w).Encode(struct {
		XMLName   xml.Name `xml:"ErrorResponse"`
		Error     e        `xml:"Error"`
		RequestID string   `xml:"RequestId"`
	}{Error: e{Type: "Sender", Code: code, Message: err.Error()}, RequestID: "aws-local"})
}

// denyJSON answers a JSON-protocol refusal: 400 with __type AccessDeniedException (an unknown
// key: UnrecognizedClientException), as DynamoDB, Step Functions, CodeBuild, SQS and SSM do.
func denyJSON(w http.ResponseWriter, contentType, typePrefix string, err error) {
	code := "AccessDeniedException"
	if _, ok := err.(*UnknownKey); ok {
		code = "UnrecognizedClientException"
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"__type": typePrefix + code, "message": err.Error(), "Message": err.Error()})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
