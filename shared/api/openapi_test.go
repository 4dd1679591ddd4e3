package api_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/httpapi/openapi"
)

// documented pairs every body of package api with its schema in docs/openapi.yaml. undocumented
// lists the JSON fields of the body that this schema leaves out on purpose (dotted paths below
// nested objects): the Invitation schema is the listed invitation, without the link that only
// the answer creating it carries.
var documented = []struct {
	schema       string
	body         any
	undocumented []string
}{
	{"Error", api.ErrorBody{}, nil},
	{"Build", api.Build{}, nil},
	{"BuildDetail", api.BuildDetail{}, nil},
	{"BuildList", api.List[api.Build]{}, nil},
	{"BuildTrigger", api.BuildTrigger{}, nil},
	{"BuildCacheUse", api.CacheUse{}, nil},
	{"BuildStage", api.BuildStage{}, nil},
	{"LiveLogLine", api.LiveLogLine{}, nil},
	{"LiveBuildStatus", api.LiveBuildStatus{}, nil},
	{"BuildProgress", api.Progress{}, nil},
	{"LogLine", api.LogLine{}, nil},
	{"NumberedLogLine", api.NumberedLogLine{}, nil},
	{"LogPage", api.LogPage{}, nil},
	{"TriggerRequest", api.TriggerRequest{}, nil},
	{"TriggerAccepted", api.TriggerAccepted{}, nil},
	{"RerunAccepted", api.RerunAccepted{}, nil},
	{"WebhookBuild", api.WebhookBuild{}, nil},
	{"ProjectItem", api.ProjectItem{}, nil},
	{"ProjectList", api.List[api.ProjectItem]{}, nil},
	{"Project", api.Project{}, nil},
	{"Uproject", api.Uproject{}, nil},
	{"BuildSetting", api.BuildSetting{}, nil},
	{"BuildSettingList", api.List[api.BuildSetting]{}, nil},
	{"Artifact", api.Artifact{}, nil},
	{"ArtifactList", api.List[api.Artifact]{}, nil},
	{"DownloadLink", api.DownloadLink{}, nil},
	{"Me", api.Me{}, nil},
	{"OrganizationSummary", api.OrganizationSummary{}, nil},
	{"Belonging", api.Belonging{}, nil},
	{"Session", api.Session{}, nil},
	{"SessionList", api.List[api.Session]{}, nil},
	{"Member", api.Member{}, nil},
	{"MemberList", api.List[api.Member]{}, nil},
	{"CreatedInvitation", api.Invitation{}, nil},
	{"Invitation", api.Invitation{}, []string{"link", "mailed"}},
	{"InvitationList", api.List[api.Invitation]{}, []string{"items.link", "items.mailed"}},
	{"InvitedBy", api.InvitedBy{}, nil},
	{"InvitationPreview", api.InvitationPreview{}, nil},
	{"Usage", api.Usage{}, nil},
	{"UsageCount", api.UsageCount{}, nil},
}

// TestBodiesMatchOpenAPI fails when a body and its schema drift apart: every property of the
// schema must be a JSON field of the body and every JSON field a property, at every depth the
// body has structs (a build's trigger, a list's items).
func TestBodiesMatchOpenAPI(t *testing.T) {
	doc := loadSchemas(t)
	for _, tt := range documented {
		t.Run(tt.schema, func(t *testing.T) {
			s, ok := doc[tt.schema]
			if !ok {
				t.Fatalf("docs/openapi.yaml has no schema %s", tt.schema)
			}
			obj := doc.object(s)
			if obj == nil {
				t.Fatalf("schema %s is not an object with properties", tt.schema)
			}
			var problems []string
			compare(doc, obj, reflect.TypeOf(tt.body), "", tt.undocumented, &problems)
			slices.Sort(problems)
			for _, p := range problems {
				t.Errorf("schema %s vs %T: %s", tt.schema, tt.body, p)
			}
		})
	}
}

// TestEveryBodyIsDocumented: a struct added to package api needs a row in documented.
func TestEveryBodyIsDocumented(t *testing.T) {
	covered := map[string]bool{}
	for _, tt := range documented {
		name, _, _ := strings.Cut(reflect.TypeOf(tt.body).Name(), "[")
		covered[name] = true
		walkStructs(reflect.TypeOf(tt.body), func(st reflect.Type) {
			n, _, _ := strings.Cut(st.Name(), "[")
			covered[n] = true
		})
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				if _, isStruct := ts.Type.(*ast.StructType); isStruct && ts.Name.IsExported() && !covered[ts.Name.Name] {
					t.Errorf("api.%s (%s) is in no row of documented: pair it with its schema in docs/openapi.yaml", ts.Name.Name, name)
				}
			}
		}
	}
}

// compare checks the JSON fields of Go type typ against the object schema obj, and recurses into
// fields whose type is a struct (or a pointer to, or slice of, one). path prefixes the names in
// problems and in skip.
func compare(doc schemas, obj map[string]any, typ reflect.Type, path string, skip []string, problems *[]string) {
	props, _ := obj["properties"].(map[string]any)
	fields := jsonFields(typ)
	for name := range props {
		if _, ok := fields[name]; !ok {
			*problems = append(*problems, "property "+path+name+" is documented but the body has no such JSON field")
		}
	}
	for name, ft := range fields {
		prop, ok := props[name].(map[string]any)
		if !ok {
			if !slices.Contains(skip, path+name) {
				*problems = append(*problems, "JSON field "+path+name+" is not a documented property")
			}
			continue
		}
		if st := structOf(ft); st != nil {
			if ft.Kind() == reflect.Slice {
				prop = doc.items(prop)
			}
			if sub := doc.object(prop); sub != nil {
				compare(doc, sub, st, path+name+".", skip, problems)
			} else {
				*problems = append(*problems, "property "+path+name+" is not an object, but the body's field is a struct")
			}
		}
	}
}

// jsonFields are the JSON object keys encoding/json writes for struct type typ, with the type
// of each (embedded structs flattened, as encoding/json does).
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(typ) {
		tag, hasTag := f.Tag.Lookup("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case !f.IsExported() || name == "-":
		case f.Anonymous && !hasTag:
			// flattened: its fields are visible fields too
		default:
			if name == "" {
				name = f.Name
			}
			out[name] = f.Type
		}
	}
	return out
}

// structOf is the struct type t is, points to or holds in a slice; nil for anything else.
func structOf(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

// walkStructs calls visit with every struct type reachable from t's fields.
func walkStructs(t reflect.Type, visit func(reflect.Type)) {
	for _, f := range reflect.VisibleFields(structOf(t)) {
		if st := structOf(f.Type); st != nil && f.IsExported() {
			visit(st)
			walkStructs(st, visit)
		}
	}
}

// schemas are the document's components.schemas, as JSON values.
type schemas map[string]any

// loadSchemas reads the components.schemas of kiln's OpenAPI document.
func loadSchemas(t *testing.T) schemas {
	t.Helper()
	var doc struct {
		Components struct {
			Schemas schemas `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.JSON(), &doc); err != nil {
		t.Fatalf("read the OpenAPI document: %v", err)
	}
	return doc.Components.Schemas
}

// resolve follows s's $ref (#/components/schemas/...), if any.
func (d schemas) resolve(s map[string]any) map[string]any {
	for range 20 {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s, _ = d[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
	return s
}

// object is the object schema with properties that s is or offers (through $ref, allOf, oneOf,
// anyOf: "a Build or null"); nil when there is none.
func (d schemas) object(s any) map[string]any {
	m, _ := s.(map[string]any)
	m = d.resolve(m)
	if m == nil {
		return nil
	}
	if _, ok := m["properties"]; ok {
		return m
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		alts, _ := m[k].([]any)
		for _, a := range alts {
			if o := d.object(a); o != nil {
				return o
			}
		}
	}
	return nil
}

// items is the schema of the items of array schema s (through $ref, allOf, oneOf, anyOf).
func (d schemas) items(s map[string]any) map[string]any {
	s = d.resolve(s)
	if it, ok := s["items"].(map[string]any); ok {
		return it
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		alts, _ := s[k].([]any)
		for _, a := range alts {
			m, _ := a.(map[string]any)
			if it := d.items(m); it != nil {
				return it
			}
		}
	}
	return nil
}
