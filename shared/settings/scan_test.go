package settings

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// kilnName is a KILN_ name in a string: a whole name, or a prefix ending in _ ("KILN_WINDOWS_HOST_").
var kilnName = regexp.MustCompile(`KILN_[A-Z0-9_]*`)

// goFile is one parsed non-test Go file of the module, outside this package.
type goFile struct {
	path string
	fset *token.FileSet
	file *ast.File
}

// moduleFiles parses every non-test Go file of the module but this package's.
func moduleFiles(t *testing.T) []goFile {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs(".")
	var files []goFile
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "cdk.out") {
				return filepath.SkipDir
			}
			if path == self {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files = append(files, goFile{rel, fset, f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found %d Go files under %s: not the module", len(files), root)
	}
	return files
}

// stringConsts are a file's package-level string constants: name → value.
func stringConsts(files []goFile, dir string) map[string]string {
	consts := map[string]string{}
	for _, f := range files {
		if filepath.Dir(f.path) != dir {
			continue
		}
		for _, d := range f.file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if s, ok := literal(vs.Values[i], nil); ok {
							consts[name.Name] = s
						}
					}
				}
			}
		}
	}
	return consts
}

// literal is the string value of e when it is a string literal, a constant of consts, or a
// concatenation starting with one ("KILN_" + x counts as "KILN_").
func literal(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		}
	case *ast.Ident:
		s, ok := consts[e.Name]
		return s, ok
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return literal(e.X, consts)
		}
	case *ast.ParenExpr:
		return literal(e.X, consts)
	}
	return "", false
}

// envReader names the call's function when it reads the environment: os.Getenv, os.LookupEnv,
// syscall.Getenv, or a getenv func a program passes around (a parameter or field so named).
func envReader(call *ast.CallExpr) (string, bool) {
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		if x, ok := fn.X.(*ast.Ident); ok && (x.Name == "os" && (fn.Sel.Name == "Getenv" || fn.Sel.Name == "LookupEnv") || x.Name == "syscall" && fn.Sel.Name == "Getenv") {
			return x.Name + "." + fn.Sel.Name, true
		}
		if strings.EqualFold(fn.Sel.Name, "getenv") {
			return "." + fn.Sel.Name, true
		}
	case *ast.Ident:
		if strings.EqualFold(fn.Name, "getenv") {
			return fn.Name, true
		}
	}
	return "", false
}

// TestNoGetenvOutsideTheRegistry: no Go file of the module but this package's reads a KILN_
// variable by its name (a literal, a constant or "KILN_"+...): os.Getenv, os.LookupEnv,
// syscall.Getenv and getenv funcs are given a row's Name, or the value is the row's Get or Read.
func TestNoGetenvOutsideTheRegistry(t *testing.T) {
	files := moduleFiles(t)
	constsOf := map[string]map[string]string{}
	for _, f := range files {
		dir := filepath.Dir(f.path)
		consts, ok := constsOf[dir]
		if !ok {
			consts = stringConsts(files, dir)
			constsOf[dir] = consts
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			fn, ok := envReader(call)
			if !ok {
				return true
			}
			if s, ok := literal(call.Args[0], consts); ok && strings.HasPrefix(s, "KILN_") {
				t.Errorf("%s:%d: %s(%q): read KILN_ settings through their row of shared/settings (settings.X.Get(getenv), .Read, or getenv(settings.X.Name))",
					f.path, f.fset.Position(call.Pos()).Line, fn, s)
			}
			return true
		})
	}
}

// TestEveryKILNNameIsARow: every KILN_ name in a string literal of the module's non-test Go
// files (messages included) is a row of Table, or a prefix ending in _ of one.
func TestEveryKILNNameIsARow(t *testing.T) {
	names := map[string]bool{}
	for _, r := range Table {
		names[r.Name] = true
	}
	isPrefix := func(p string) bool {
		for n := range names {
			if strings.HasPrefix(n, p) {
				return true
			}
		}
		return false
	}
	for _, f := range moduleFiles(t) {
		ast.Inspect(f.file, func(n ast.Node) bool {
			b, ok := n.(*ast.BasicLit)
			if !ok || b.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(b.Value)
			if err != nil {
				return true
			}
			for _, name := range kilnName.FindAllString(s, -1) {
				if names[name] || strings.HasSuffix(name, "_") && isPrefix(name) {
					continue
				}
				t.Errorf("%s:%d: %s is not a row of the settings registry (shared/settings): add one, or fix the name",
					f.path, f.fset.Position(b.Pos()).Line, name)
			}
			return true
		})
	}
}
