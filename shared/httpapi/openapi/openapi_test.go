package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// httpapiDir is the HTTP layer whose routes the document describes.
const httpapiDir = ".."

// TestDocumentIsValidOpenAPI31 parses the document, builds its model (every $ref resolves) and
// validates it against the OpenAPI 3.1 schema.
func TestDocumentIsValidOpenAPI31(t *testing.T) {
	doc, err := libopenapi.NewDocument(YAML())
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("openapi version %q, want 3.1.0", v)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("build model: %v", err)
	}
	if idx := model.Index; idx != nil {
		for _, e := range idx.GetReferenceIndexErrors() {
			t.Errorf("reference: %v", e)
		}
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("not valid OpenAPI 3.1: %s: %s", e.Message, e.Reason)
			for _, f := range e.SchemaValidationErrors {
				t.Errorf("  at %s (line %d): %s", f.FieldPath, f.Line, f.Reason)
			}
		}
	}
}

// TestSchemasAreValidJSONSchema compiles every schema of the components against JSON Schema
// 2020-12, the dialect of OpenAPI 3.1: the OpenAPI meta-schema does not look inside schemas, so
// a typo such as type: strin would pass it.
func TestSchemasAreValidJSONSchema(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSON()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem:///openapi.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	components := docJSON(t)["components"].(map[string]any)
	var locations []string
	for name := range components["schemas"].(map[string]any) {
		locations = append(locations, "#/components/schemas/"+name)
	}
	for name, r := range components["responses"].(map[string]any) {
		if content, ok := r.(map[string]any)["content"].(map[string]any); ok {
			for mt := range content {
				locations = append(locations, "#/components/responses/"+name+"/content/"+strings.ReplaceAll(mt, "/", "~1")+"/schema")
			}
		}
	}
	sort.Strings(locations)
	for _, loc := range locations {
		if _, err := c.Compile(url + loc); err != nil {
			t.Errorf("%s: %v", loc, err)
		}
	}
}

// TestJSONIsTheYAML checks the conversion: same document, key order kept.
func TestJSONIsTheYAML(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(JSON(), &doc); err != nil {
		t.Fatalf("JSON() is not JSON: %v", err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi = %v", doc["openapi"])
	}
	if !strings.HasPrefix(string(JSON()), "{\n  \"openapi\": \"3.1.0\",\n  \"info\"") {
		t.Errorf("key order not kept: %.60s", JSON())
	}
	for _, tc := range []struct{ yaml, json string }{
		{"a: 1\nb: [x, 2.5, true, null, '3']\nc: {d: \"e\\n\"}\n", `{"a":1,"b":["x",2.5,true,null,"3"],"c":{"d":"e\n"}}`},
		{"'200': ok\nx: &a {k: v}\ny: *a\n", `{"200":"ok","x":{"k":"v"},"y":{"k":"v"}}`},
		{"p: '^\\d{4}$'\nq: <b>&amp;\n", `{"p":"^\\d{4}$","q":"<b>&amp;"}`},
	} {
		got, err := ToJSON([]byte(tc.yaml))
		if err != nil {
			t.Errorf("ToJSON(%q): %v", tc.yaml, err)
			continue
		}
		var a, b any
		_ = json.Unmarshal(got, &a)
		_ = json.Unmarshal([]byte(tc.json), &b)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("ToJSON(%q) = %s, want %s", tc.yaml, got, tc.json)
		}
	}
	for _, bad := range []string{"a: 1\na: 2\n", "x: &a {k: v}\ny:\n  <<: *a\n", "[a, b]: c\n"} {
		if _, err := ToJSON([]byte(bad)); err == nil {
			t.Errorf("ToJSON(%q) accepted it", bad)
		}
	}
}

func TestHandlerServesJSON(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, len(JSON())+1)
	n, _ := resp.Body.Read(body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if n == 0 || resp.ContentLength != int64(len(JSON())) {
		t.Errorf("length %d, want %d", resp.ContentLength, len(JSON()))
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/openapi.json", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag: %d, want 304", again.StatusCode)
	}
}

// route is one method of one path registered in routes.go.
type route struct {
	method, path string
	// action is the kiln.Act... the caller's role must allow, or "" for an unauthenticated route.
	action string
}

// registeredRoutes reads routes.go: every s.handle("/path", methods{http.MethodX: handler}) and
// every s.mux.Handle/HandleFunc("METHOD /path", ...).
func registeredRoutes(t *testing.T) []route {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(httpapiDir, "routes.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var routes []route
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) < 2 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		pattern, _ := strconv.Unquote(lit.Value)
		switch sel.Sel.Name {
		case "handle":
			ms, ok := call.Args[1].(*ast.CompositeLit)
			if !ok {
				t.Fatalf("%s: s.handle without a methods literal", fset.Position(call.Pos()))
			}
			for _, el := range ms.Elts {
				kv := el.(*ast.KeyValueExpr)
				key, ok := kv.Key.(*ast.SelectorExpr)
				if !ok || !strings.HasPrefix(key.Sel.Name, "Method") {
					t.Fatalf("%s: methods key is not http.MethodX", fset.Position(kv.Pos()))
				}
				routes = append(routes, route{method: strings.ToUpper(strings.TrimPrefix(key.Sel.Name, "Method")),
					path: pattern, action: actionOf(kv.Value)})
			}
		case "Handle", "HandleFunc":
			method, path, ok := strings.Cut(pattern, " ")
			if !ok { // the catch-all "/" and other method-less patterns are routing, not operations
				return true
			}
			routes = append(routes, route{method: method, path: path, action: actionOf(call.Args[1])})
		}
		return true
	})
	if len(routes) < 10 {
		t.Fatalf("found only %d routes in routes.go; has its form changed?", len(routes))
	}
	return routes
}

// actionOf finds s.authed(kiln.ActX, ...) or s.audited("kind", kiln.ActX, ...) in a handler
// expression, or "SignedIn" for s.signedIn(...): any caller, with or without an organization.
func actionOf(e ast.Expr) string {
	action := ""
	ast.Inspect(e, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		arg := -1
		switch {
		case sel.Sel.Name == "signedIn":
			action = "SignedIn"
			return false
		case sel.Sel.Name == "authed" && len(call.Args) > 0:
			arg = 0
		case sel.Sel.Name == "audited" && len(call.Args) > 1:
			arg = 1
		}
		if arg >= 0 {
			if a, ok := call.Args[arg].(*ast.SelectorExpr); ok {
				action = a.Sel.Name
			}
		}
		return action == ""
	})
	return action
}

// docJSON is the document as generic JSON, for structural checks.
func docJSON(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// documentedOperations maps "METHOD /path" to its operation object.
func documentedOperations(t *testing.T) map[string]map[string]any {
	ops := map[string]map[string]any{}
	for path, item := range docJSON(t)["paths"].(map[string]any) {
		for m, op := range item.(map[string]any) {
			if slices.Contains(httpMethods, m) {
				ops[strings.ToUpper(m)+" "+path] = op.(map[string]any)
			}
		}
	}
	return ops
}

// TestEveryRouteIsDocumented fails when routes.go and the document disagree on the operations.
func TestEveryRouteIsDocumented(t *testing.T) {
	ops := documentedOperations(t)
	registered := map[string]bool{}
	for _, r := range registeredRoutes(t) {
		key := r.method + " " + r.path
		registered[key] = true
		if _, ok := ops[key]; !ok {
			t.Errorf("routes.go registers %s, the document does not describe it", key)
		}
	}
	var extra []string
	for key := range ops {
		if !registered[key] {
			extra = append(extra, key)
		}
	}
	sort.Strings(extra)
	for _, key := range extra {
		hint := ""
		if key == "GET /openapi.json" {
			hint = `; add to routes.go: s.handle("/openapi.json", methods{http.MethodGet: openapi.Handler()})`
		}
		t.Errorf("the document describes %s, routes.go does not register it%s", key, hint)
	}
}

// TestOperationsFollowTheConventions checks what every operation of the API shares: the
// statuses each can answer given its route (auth, role, body, ids), the X-Request-Id header on
// every response, strict request bodies.
func TestOperationsFollowTheConventions(t *testing.T) {
	ops := documentedOperations(t)
	routes := map[string]route{}
	for _, r := range registeredRoutes(t) {
		routes[r.method+" "+r.path] = r
	}
	ids := map[string]string{}
	for key, op := range ops {
		id, _ := op["operationId"].(string)
		if id == "" {
			t.Errorf("%s: no operationId", key)
		} else if other, dup := ids[id]; dup {
			t.Errorf("%s and %s share operationId %s", key, other, id)
		}
		ids[id] = key
		responses := op["responses"].(map[string]any)
		has := func(status string) bool { _, ok := responses[status]; return ok }
		for status, resp := range responses {
			r := resolve(t, resp.(map[string]any))
			headers, _ := r["headers"].(map[string]any)
			if _, ok := headers["X-Request-Id"]; !ok {
				t.Errorf("%s %s: no X-Request-Id header", key, status)
			}
		}
		r, registered := routes[key]
		if !registered {
			continue // reported by TestEveryRouteIsDocumented
		}
		sec, overridden := op["security"].([]any)
		public := overridden && len(sec) == 0
		// The Perforce submit webhook checks its own kind of token (a trigger token) rather than
		// going through the API's bearer check.
		ownToken := overridden && len(sec) == 1 && sec[0].(map[string]any)["triggerToken"] != nil
		switch {
		case r.action == "" && !public && !ownToken:
			t.Errorf("%s: routes.go serves it without a token; the document must say security: [] (or triggerToken)", key)
		case r.action != "" && public:
			t.Errorf("%s: routes.go asks for a token; the document says security: []", key)
		}
		// Every route that needs a role can answer 403: a role that may not, or a console session
		// that acts for no organization yet. SignedIn routes need neither.
		want := map[string]bool{"403": r.action != "" && r.action != "SignedIn"}
		if r.action != "" {
			want["401"], want["429"], want["500"] = true, true, true
		}
		if strings.Contains(r.path, "{") {
			want["404"] = true
		}
		if body, ok := op["requestBody"].(map[string]any); ok {
			want["400"], want["413"] = true, true
			schema := resolve(t, body["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any))
			// The one exception: a public operation that receives a third party's payload (GitHub's
			// webhook events), whose format is not kiln's to close; it must say so explicitly with
			// additionalProperties: true.
			foreign := public && schema["additionalProperties"] == true
			if schema["additionalProperties"] != false && !foreign {
				t.Errorf("%s: the request body schema must have additionalProperties: false (the server refuses unknown fields)", key)
			}
		}
		for status, w := range want {
			if w && !has(status) {
				t.Errorf("%s: the route can answer %s, the document does not say so", key, status)
			}
			if !w && status == "403" && r.action == "SignedIn" && has(status) {
				t.Errorf("%s: every signed-in caller may call it, yet the document lists 403", key)
			}
		}
	}
	// Every object schema is closed, so clients and the test transport catch stray fields.
	for name, s := range docJSON(t)["components"].(map[string]any)["schemas"].(map[string]any) {
		checkClosed(t, "components.schemas."+name, s.(map[string]any))
	}
}

// checkClosed reports object schemas with properties but without additionalProperties: false.
func checkClosed(t *testing.T, at string, s map[string]any) {
	if props, ok := s["properties"].(map[string]any); ok {
		if _, typed := s["type"]; typed && s["additionalProperties"] != false {
			t.Errorf("%s: an object schema without additionalProperties: false", at)
		}
		for name, p := range props {
			if pm, ok := p.(map[string]any); ok {
				checkClosed(t, at+"."+name, pm)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		checkClosed(t, at+"[]", items)
	}
}

// resolve follows a local $ref.
func resolve(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	ref, ok := obj["$ref"].(string)
	if !ok {
		return obj
	}
	var cur any = docJSON(t)
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("bad $ref %s", ref)
		}
		cur = m[part]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("$ref %s resolves to nothing", ref)
	}
	return resolve(t, m)
}

// TestErrorCodesMatchTheServer reads statusOf in errors.go: every code the server can send is in
// the document's ErrorCode enum and allowed by the document's response for its status, and the
// document lists no code the server does not have.
func TestErrorCodesMatchTheServer(t *testing.T) {
	server := serverErrorCodes(t)
	doc := docJSON(t)
	var enum []string
	for _, c := range doc["components"].(map[string]any)["schemas"].(map[string]any)["ErrorCode"].(map[string]any)["enum"].([]any) {
		enum = append(enum, c.(string))
	}
	for code, status := range server {
		if !slices.Contains(enum, code) {
			t.Errorf("errors.go answers %s with %d; the ErrorCode enum lacks it", code, status)
		}
	}
	for _, code := range enum {
		if _, ok := server[code]; !ok {
			t.Errorf("the ErrorCode enum has %s, errors.go has no such code", code)
		}
	}
	// Which codes each error status allows, from the component responses the operations use.
	allowed := map[int][]string{}
	for _, op := range documentedOperations(t) {
		for status, resp := range op["responses"].(map[string]any) {
			n, _ := strconv.Atoi(status)
			if n < 400 {
				continue
			}
			allowed[n] = append(allowed[n], codesOf(t, resolve(t, resp.(map[string]any)))...)
		}
	}
	mna := resolve(t, map[string]any{"$ref": "#/components/responses/MethodNotAllowed"})
	allowed[405] = codesOf(t, mna)
	for code, status := range server {
		if !slices.Contains(allowed[status], code) {
			t.Errorf("errors.go answers %s with %d; no %d response of the document allows that code", code, status, status)
		}
	}
}

// codesOf lists the error codes a response's schema allows (allOf Error + an enum or const).
func codesOf(t *testing.T, resp map[string]any) []string {
	content, _ := resp["content"].(map[string]any)
	mt, _ := content["application/json"].(map[string]any)
	if mt == nil {
		return nil
	}
	schema := resolve(t, mt["schema"].(map[string]any))
	var codes []string
	for _, part := range schema["allOf"].([]any) {
		props, _ := part.(map[string]any)["properties"].(map[string]any)
		e, _ := props["error"].(map[string]any)
		if c, ok := e["const"].(string); ok {
			codes = append(codes, c)
		}
		for _, c := range asSlice(e["enum"]) {
			codes = append(codes, c.(string))
		}
	}
	return codes
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// serverErrorCodes reads the statusOf map of errors.go, resolving each code constant from the
// package that declares it and each http.StatusX to its number.
func serverErrorCodes(t *testing.T) map[string]int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(httpapiDir, "errors.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	// import name → directory, for the module's own packages
	const module = "github.com/kilnbuild/kiln/"
	root := filepath.Join(httpapiDir, "..", "..")
	dirs := map[string]string{"": httpapiDir}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if rest, ok := strings.CutPrefix(p, module); ok {
			name := filepath.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			dirs[name] = filepath.Join(root, filepath.FromSlash(rest))
		}
	}
	consts := map[string]map[string]string{}
	constOf := func(pkg, name string) string {
		if consts[pkg] == nil {
			consts[pkg] = stringConsts(t, dirs[pkg])
		}
		v, ok := consts[pkg][name]
		if !ok {
			t.Fatalf("errors.go: cannot resolve %s.%s", pkg, name)
		}
		return v
	}
	statusByName := map[string]int{}
	for code := 100; code < 600; code++ {
		if text := http.StatusText(code); text != "" {
			statusByName["Status"+strings.NewReplacer(" ", "", "-", "", "'", "").Replace(text)] = code
		}
	}
	codes := map[string]int{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "statusOf" {
			return true
		}
		for _, el := range vs.Values[0].(*ast.CompositeLit).Elts {
			kv := el.(*ast.KeyValueExpr)
			var code string
			switch k := kv.Key.(type) {
			case *ast.Ident:
				code = constOf("", k.Name)
			case *ast.SelectorExpr:
				code = constOf(k.X.(*ast.Ident).Name, k.Sel.Name)
			default:
				t.Fatalf("%s: unexpected statusOf key", fset.Position(kv.Pos()))
			}
			v, ok := kv.Value.(*ast.SelectorExpr)
			if !ok || statusByName[v.Sel.Name] == 0 {
				t.Fatalf("%s: unexpected statusOf value", fset.Position(kv.Pos()))
			}
			codes[code] = statusByName[v.Sel.Name]
		}
		return false
	})
	if len(codes) < 10 {
		t.Fatalf("found only %d codes in statusOf; has errors.go changed form?", len(codes))
	}
	return codes
}

// stringConsts reads the string constants of the non-test Go files of a directory.
func stringConsts(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							out[n.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
		}
	}
	return out
}
