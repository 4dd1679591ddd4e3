package stack_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/awsapp"
)

// configLoaders are the awsapp loaders a function's main may hand to awsapp.StartLambda, each
// reduced to its error (what it reads is recorded by its getenv).
var configLoaders = map[string]func(getenv func(string) string) error{
	"LoadAWSConfig": func(getenv func(string) string) error {
		_, err := awsapp.LoadAWSConfig(getenv)
		return err
	},
	"LoadBackgroundConfig": func(getenv func(string) string) error {
		_, err := awsapp.LoadBackgroundConfig(getenv)
		return err
	},
}

// tokenSamples stand for the variables whose values the template holds as CloudFormation
// expressions (a Ref, a Fn::Join): a value of the same shape, so that a loader checks it and reads on.
var tokenSamples = map[string]string{
	"KILN_DYNAMODB_TABLE":        "kiln-table",
	"KILN_MASTER_KEY_SECRET_ARN": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:master",
	"KILN_ARTIFACTS":             "s3://kiln-bucket/artifacts",
	"KILN_PUBLIC_URL":            "https://kiln.example",
	"KILN_HOST_PROJECT":          "kiln-hosts",
	"KILN_HOST_IMAGES":           `{"5.4":"123456789012.dkr.ecr.eu-west-1.amazonaws.com/kiln-host:5.4"}`,
	"KILN_DELIVERY_QUEUE_URL":    "https://sqs.eu-west-1.amazonaws.com/123456789012/kiln-delivery",
	"KILN_GITHUB_SECRET_ARN":     "arn:aws:secretsmanager:eu-west-1:123456789012:secret:github",
	"KILN_STATE_MACHINE_ARN":     "arn:aws:states:eu-west-1:123456789012:stateMachine:kiln",
	"KILN_WINDOWS_HOST_GROUP":    "kiln-windows-hosts",
	"KILN_AWS_ACCOUNT_ID":        "123456789012",
	"KILN_LIVE_ENDPOINT":         "https://abcdef1234.execute-api.eu-west-1.amazonaws.com/live",
}

// readsOf loads a function's configuration as its main does (functions/<name>/main.go), from
// env (the template's environment of the function, expressions replaced by tokenSamples), and
// returns the variables the loader read. A loader main.go defines itself (a function literal)
// is not run: the variables it names in string literals are taken as read.
func readsOf(t *testing.T, name string, env map[string]any) map[string]bool {
	t.Helper()
	loader := loaderOf(t, name)
	reads := map[string]bool{}
	if lit, ok := loader.(*ast.FuncLit); ok {
		ast.Inspect(lit, func(n ast.Node) bool {
			if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
				if s, err := strconv.Unquote(b.Value); err == nil {
					reads[s] = true
				}
			}
			return true
		})
		return reads
	}
	sel, ok := loader.(*ast.SelectorExpr)
	if !ok || fmt.Sprint(sel.X) != "awsapp" || configLoaders[sel.Sel.Name] == nil {
		t.Fatalf("functions/%s loads its configuration with %T %v: add it to configLoaders", name, loader, loader)
	}
	getenv := func(k string) string {
		reads[k] = true
		if k == "KILN_EC2_IDENTITY_CERTS" { // the test stack's is a placeholder, not a certificate
			return ""
		}
		switch v := env[k].(type) {
		case nil:
			return ""
		case string:
			return v
		default:
			s, ok := tokenSamples[k]
			if !ok {
				t.Fatalf("functions/%s: %s is %v in the template: add a sample to tokenSamples", name, k, v)
			}
			return s
		}
	}
	if err := configLoaders[sel.Sel.Name](getenv); err != nil {
		t.Fatalf("functions/%s: %s refused the template's environment: %v", name, sel.Sel.Name, err)
	}
	return reads
}

// loaderOf returns the first argument of the awsapp.StartLambda call of functions/<name>/main.go.
func loaderOf(t *testing.T, name string) ast.Expr {
	t.Helper()
	path := filepath.Join("..", "..", "functions", name, "main.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var loader ast.Expr
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || loader != nil {
			return loader == nil
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "StartLambda" && len(call.Args) == 2 {
			loader = call.Args[0]
			if id, ok := loader.(*ast.Ident); ok && id.Obj != nil { // a local variable: its value
				if as, ok := id.Obj.Decl.(*ast.AssignStmt); ok && len(as.Rhs) == 1 {
					loader = as.Rhs[0]
				}
			}
		}
		return true
	})
	if loader == nil {
		t.Fatalf("%s: no awsapp.StartLambda(loader, build) call", path)
	}
	return loader
}
