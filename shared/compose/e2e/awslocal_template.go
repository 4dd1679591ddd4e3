package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/settings"
)

// The stack's template for the aws-local tests: KILN_TEST_STACK_TEMPLATE when set, else synthesized
// by `go run ./infra` (the CDK app through jsii: about a minute on an idle machine, several on a
// busy one) with Windows hosts on, and cached in .cache/awslocal-template/ under a hash of what
// it is made of (infra/, cdk.json, go.sum, the state machine's definition, the buildspec), so a
// test run synthesizes only after one of them changed.
var (
	stackTemplateOnce sync.Once
	stackTemplateData []byte
	stackTemplateErr  error
)

func stackTemplate(t testing.TB) []byte {
	t.Helper()
	stackTemplateOnce.Do(func() { stackTemplateData, stackTemplateErr = loadStackTemplate() })
	if stackTemplateErr != nil {
		t.Fatalf("the stack's template for aws-local: %v", stackTemplateErr)
	}
	return stackTemplateData
}

func loadStackTemplate() ([]byte, error) {
	if p := settings.TestStackTemplate.Get(os.Getenv); p != "" {
		return os.ReadFile(p)
	}
	root := RepoPath()
	sum, err := templateInputsHash(root)
	if err != nil {
		return nil, err
	}
	cached := filepath.Join(root, ".cache", "awslocal-template", sum+".json")
	if data, err := os.ReadFile(cached); err == nil {
		return data, nil
	}
	data, err := synthesizeTemplate(root)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err == nil {
		_ = os.WriteFile(cached+".tmp", data, 0o644)
		_ = os.Rename(cached+".tmp", cached)
	}
	return data, nil
}

// templateInputsHash hashes what the template is made of.
func templateInputsHash(root string) (string, error) {
	h := sha256.New()
	add := func(path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(path, root), len(data))
		h.Write(data)
		return nil
	}
	for _, dir := range []string{"infra", "shared/workflow/sfn"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
				return err
			}
			return add(path)
		})
		if err != nil {
			return "", err
		}
	}
	fmt.Fprintf(h, "context %s\n", testHostsContext) // what synthesizeTemplate adds to cdk.json's
	for _, f := range []string{"cdk.json", "go.sum", "buildspec/buildspec.yml"} {
		if err := add(filepath.Join(root, f)); err != nil && !os.IsNotExist(err) {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// testLinuxEngine is the engine version the test template's Linux hosts' AMI holds: a version no
// other test builds (their Linux builds of 5.3 and 5.4 stay on the CodeBuild stand-in), which
// aws-local's engines directory provides with its 5.4 (as an image of 5.4 runs 5.4.9).
const LinuxEngine = "5.4.9"

// testHostsContext are the hosted hosts' context values of the test template.
const testHostsContext = `kiln:windowsAmiId=ami-0123456789abcdef0 kiln:linuxAmiId=ami-0fedcba9876543210 kiln:linuxEngineVersions=` + LinuxEngine

// synthesizeTemplate runs the CDK app as `cdk synth` would (CDK_OUTDIR, CDK_CONTEXT_JSON), with
// stand-in Lambda binaries and Windows and Linux hosts on (testHostsContext).
func synthesizeTemplate(root string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "kiln-synth-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for _, fn := range []string{"api", "task", "ended", "schedule", "deliver", "admin", "live"} {
		if err := os.MkdirAll(filepath.Join(dir, "lambda", fn), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "lambda", fn, "bootstrap"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			return nil, err
		}
	}
	cert, err := selfSignedCertificate()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "identity.pem"), cert, 0o644); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(root, "cdk.json"))
	if err != nil {
		return nil, err
	}
	var cdk struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &cdk); err != nil {
		return nil, err
	}
	ctx := cdk.Context
	ctx["kiln:lambdaAssetRoot"] = filepath.Join(dir, "lambda")
	for _, kv := range strings.Fields(testHostsContext) {
		k, v, _ := strings.Cut(kv, "=")
		ctx[k] = v
	}
	ctx["kiln:ec2IdentityCertsFile"] = filepath.Join(dir, "identity.pem")
	ctx["kiln:hostImages"] = `{"5.4":"ue-5.4"}`
	ctxJSON, _ := json.Marshal(ctx)
	out := filepath.Join(dir, "cdk.out")
	cmd := exec.Command("go", "run", "./infra")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CDK_OUTDIR="+out, "CDK_CONTEXT_JSON="+string(ctxJSON), "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go run ./infra: %w\n%s", err, msg)
	}
	return os.ReadFile(filepath.Join(out, "Kiln.template.json"))
}

func selfSignedCertificate() ([]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048) // AWS signs instance identity documents with RSA
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kiln test identity"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// templateEdit changes a parsed template.
type TemplateEdit func(t testing.TB, resources map[string]any)

// writeTemplate writes the stack's template with the edits applied to a file of the test's.
func WriteTemplate(t testing.TB, edits ...TemplateEdit) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(stackTemplate(t), &doc); err != nil {
		t.Fatal(err)
	}
	resources := doc["Resources"].(map[string]any)
	for _, e := range edits {
		e(t, resources)
	}
	data, _ := json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "Kiln.template.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rolePolicy returns the statements of the AWS::IAM::Policy attached to the role of a principal
// (a function's name, "states" for the state machine's role, "hosts" for the CodeBuild hosts').
func rolePolicy(t testing.TB, resources map[string]any, principal string) (policy map[string]any) {
	t.Helper()
	prefix := map[string]string{"states": "BuildWorkflowRole", "hosts": "HostProjectRole"}[principal]
	if prefix == "" {
		prefix = map[string]string{"api": "APIFunctionRole"}[principal]
	}
	if prefix == "" {
		prefix = strings.ToUpper(principal[:1]) + principal[1:] + "FunctionRole"
	}
	// The role's default policy (CDK's <Role>DefaultPolicy), where its grants are; a role may
	// have policies of its own besides (the live function's invocation of itself).
	var found map[string]any
	for id, r := range resources {
		r := r.(map[string]any)
		if r["Type"] != "AWS::IAM::Policy" {
			continue
		}
		for _, role := range r["Properties"].(map[string]any)["Roles"].([]any) {
			if ref, _ := role.(map[string]any)["Ref"].(string); strings.HasPrefix(ref, prefix) && len(ref) == len(prefix)+8 {
				if found == nil || strings.Contains(id, "DefaultPolicy") {
					found = r["Properties"].(map[string]any)["PolicyDocument"].(map[string]any)
				}
			}
		}
	}
	if found != nil {
		return found
	}
	t.Fatalf("no policy of the role of %s in the template", principal)
	return nil
}

// withoutAction removes an action from every statement of the principal's policy (a statement
// left without actions is dropped).
func WithoutAction(principal, action string) TemplateEdit {
	return func(t testing.TB, resources map[string]any) {
		doc := rolePolicy(t, resources, principal)
		var kept []any
		for _, s := range doc["Statement"].([]any) {
			s := s.(map[string]any)
			var actions []any
			for _, a := range asAnyList(s["Action"]) {
				if a != action {
					actions = append(actions, a)
				}
			}
			if len(actions) > 0 {
				s["Action"] = actions
				kept = append(kept, s)
			}
		}
		doc["Statement"] = kept
	}
}

// withStatement adds a statement to the principal's policy.
func withStatement(principal string, statement map[string]any) TemplateEdit {
	return func(t testing.TB, resources map[string]any) {
		doc := rolePolicy(t, resources, principal)
		doc["Statement"] = append(doc["Statement"].([]any), statement)
	}
}

// withRuleName makes the state machine role's events statement name a rule.
func WithRuleName(name string) TemplateEdit {
	return func(t testing.TB, resources map[string]any) {
		doc := rolePolicy(t, resources, "states")
		for _, s := range doc["Statement"].([]any) {
			s := s.(map[string]any)
			for _, a := range asAnyList(s["Action"]) {
				if a == "events:PutRule" {
					s["Resource"] = map[string]any{"Fn::Sub": "arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:rule/" + name}
					return
				}
			}
		}
		t.Fatal("the state machine's role has no events:PutRule statement")
	}
}

func asAnyList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// stackTemplateFile is the stack's synthesized template as infra makes it, unedited: the aws-local
// tests run under the IAM policies the deployment would really have.
func StackTemplateFile(t testing.TB) string {
	return WriteTemplate(t)
}

// withScheduleStartExecution grants the schedule function states:StartExecution on the state
// machine (unless it has it).
func WithScheduleStartExecution() TemplateEdit {
	return func(t testing.TB, resources map[string]any) {
		var machine string
		for id, r := range resources {
			if r.(map[string]any)["Type"] == "AWS::StepFunctions::StateMachine" {
				machine = id
			}
		}
		WithoutAction("schedule", "states:StartExecution")(t, resources)
		withStatement("schedule", map[string]any{"Effect": "Allow", "Action": "states:StartExecution", "Resource": map[string]any{"Ref": machine}})(t, resources)
	}
}
