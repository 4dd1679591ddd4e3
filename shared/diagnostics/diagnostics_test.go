package diagnostics

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// collect runs a fixture from testdata through a collector, line by line.
func collect(t *testing.T, fixture, uproject string, max int) Result {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := New(uproject, max)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c.Add(sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c.Result()
}

func TestFixtures(t *testing.T) {
	cases := []struct {
		fixture, uproject string
		want              Result
	}{
		{"linux-compile.log", "Games/Shooter/Shooter.uproject", Result{
			Diagnostics: []Diagnostic{
				{Path: "Games/Shooter/Source/Shooter/Weapon.cpp", Line: 42, Column: 17, Severity: Error, Message: "use of undeclared identifier 'Ammo'"},
				{Path: "Games/Shooter/Shooter.uproject", Line: 1, Severity: Error,
					Message: "/opt/engines/5.3/Engine/Source/Runtime/Core/Public/Misc/Build.h(12,1): 'Missing.h' file not found"},
				{Path: "Games/Shooter/Source/Shooter/Player.cpp", Line: 88, Severity: Error, Message: "Unknown variable specifier 'BlueprintReadWritee'"},
				{Path: "Games/Shooter/Shooter.uproject", Line: 1, Severity: Error, Message: "Failed to cook /Game/Maps/Arena"},
				{Path: "Games/Shooter/Source/Shooter/Weapon.h", Line: 7, Column: 1, Severity: Warning,
					Message: "'UWeapon' has virtual functions but non-virtual destructor [-Wnon-virtual-dtor]"},
				{Path: "Games/Shooter/Shooter.uproject", Line: 1, Severity: Warning, Message: "/Game/Maps/Main: Texture streaming pool over budget"},
			},
			Errors: 4, Warnings: 3, Skipped: 1, // the engine header's warning
		}},
		{"windows-compile.log", "Shooter.uproject", Result{
			Diagnostics: []Diagnostic{
				{Path: "Source/Shooter/Weapon.cpp", Line: 42, Severity: Error, Message: "C2065: 'Ammo': undeclared identifier"},
				{Path: "Source/Shooter/Legacy.cpp", Line: 10, Column: 5, Severity: Warning, Message: "C4996: 'strcpy': This function or variable may be unsafe."},
				{Path: "Config/DefaultEngine.ini", Line: 3, Severity: Warning, Message: "Unknown section [Foo]"},
			},
			// the second Weapon.cpp line differs only by the case of its path: two raw, one placed
			Errors: 2, Warnings: 3, Skipped: 1,
		}},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			got := collect(t, c.fixture, c.uproject, 0)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", dump(got), dump(c.want))
			}
		})
	}
}

func dump(r Result) string {
	s := fmt.Sprintf("errors %d warnings %d dropped %d skipped %d\n", r.Errors, r.Warnings, r.Dropped, r.Skipped)
	for _, d := range r.Diagnostics {
		s += fmt.Sprintf("  %+v\n", d)
	}
	return s
}

// Each shape of line, once the checkout directory /ws is known (the .uproject is at the root).
func TestLineShapes(t *testing.T) {
	cases := []struct {
		name, line string
		want       *Diagnostic // nil: not a diagnostic
	}{
		{"clang error", "/ws/Source/A.cpp:3:9: error: expected ';'", &Diagnostic{"Source/A.cpp", 3, 9, Error, "expected ';'"}},
		{"gcc no column", "/ws/Source/A.cpp:3: warning: unused variable 'x'", &Diagnostic{"Source/A.cpp", 3, 0, Warning, "unused variable 'x'"}},
		{"clang fatal", "/ws/Source/A.cpp:1:10: fatal error: 'B.h' file not found", &Diagnostic{"Source/A.cpp", 1, 10, Error, "'B.h' file not found"}},
		{"clang relative", "  Source/A.cpp:3:9: error: oops", &Diagnostic{"Source/A.cpp", 3, 9, Error, "oops"}},
		{"msvc", `/ws/Source/A.cpp(12): error C2065: 'x': undeclared identifier`, &Diagnostic{"Source/A.cpp", 12, 0, Error, "C2065: 'x': undeclared identifier"}},
		{"msvc in another checkout", `C:\ws\Source\A.cpp(12): error C2065: 'x'`, &Diagnostic{"Game.uproject", 1, 0, Error, `C:\ws\Source\A.cpp(12): C2065: 'x'`}},
		{"msvc column", `/ws/Source/A.cpp(12,4): warning C4996: 'f': deprecated`, &Diagnostic{"Source/A.cpp", 12, 4, Warning, "C4996: 'f': deprecated"}},
		{"msvc fatal", `/ws/Source/A.cpp(1): fatal error C1083: Cannot open include file: 'B.h'`, &Diagnostic{"Source/A.cpp", 1, 0, Error, "C1083: Cannot open include file: 'B.h'"}},
		{"unreal compile with file", "LogCompile: Error: /ws/Source/A.h(20): Missing '}'", &Diagnostic{"Source/A.h", 20, 0, Error, "Missing '}'"}},
		{"unreal timestamped", "[2024.05.01-10.00.00:000][ 12]LogCook: Warning: Asset /Game/X is too big", &Diagnostic{"Game.uproject", 1, 0, Warning, "Asset /Game/X is too big"}},
		{"unreal cook error", "LogCook: Error: Failed to cook /Game/Maps/Main", &Diagnostic{"Game.uproject", 1, 0, Error, "Failed to cook /Game/Maps/Main"}},
		{"unreal words in parentheses", "LogCompile: Error: Function Foo (line 3): bad", &Diagnostic{"Game.uproject", 1, 0, Error, "Function Foo (line 3): bad"}},
		{"other categories", "LogInit: Error: not a compile error", nil},
		{"display", "LogCook: Display: Cooked 12 packages with 0 errors and 0 warnings", nil},
		{"prose", "Error: something went wrong", nil},
		{"out of the repository", "/ws/../etc/A.h:1:1: error: no", &Diagnostic{"Game.uproject", 1, 0, Error, "/ws/../etc/A.h(1,1): no"}},
		{"relative out of the repository", "../../Engine/A.h:1:1: warning: no", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			col := New("Game.uproject", 0)
			col.Add("Setting up ProjectParams for /ws/Game.uproject")
			col.Add(c.line)
			got := col.Result().Diagnostics
			switch {
			case c.want == nil && len(got) != 0:
				t.Errorf("%q: got %+v, want nothing", c.line, got)
			case c.want != nil && (len(got) != 1 || got[0] != *c.want):
				t.Errorf("%q: got %+v, want %+v", c.line, got, *c.want)
			}
		})
	}
}

// A log that never names the .uproject's absolute path still places paths through its
// directory.
func TestPlacesPathsWithoutTheCheckoutLine(t *testing.T) {
	c := New("Games/Shooter/Shooter.uproject", 0)
	c.Add("/somewhere/else/Games/Shooter/Source/A.cpp:5:1: error: boom")
	got := c.Result().Diagnostics
	if len(got) != 1 || got[0].Path != "Games/Shooter/Source/A.cpp" || got[0].Line != 5 {
		t.Fatalf("got %+v", got)
	}
}

// Past its max a collector keeps errors before warnings and counts what it dropped.
func TestCapKeepsErrors(t *testing.T) {
	c := New("Game.uproject", 3)
	for i := 1; i <= 4; i++ {
		c.Add(fmt.Sprintf("Source/A.cpp:%d:1: warning: w%d", i, i))
	}
	c.Add("Source/A.cpp:9:1: error: e1")
	c.Add("Source/A.cpp:9:1: error: e1") // a repeat is not counted
	c.Add("Source/A.cpp:10:1: error: e2")
	r := c.Result()
	var got []string
	for _, d := range r.Diagnostics {
		got = append(got, d.Message)
	}
	if want := []string{"e1", "e2", "w1"}; !reflect.DeepEqual(got, want) || r.Errors != 2 || r.Warnings != 4 || r.Dropped != 3 {
		t.Fatalf("got %v errors %d warnings %d dropped %d, want %v, 2, 4, 3", got, r.Errors, r.Warnings, r.Dropped, want)
	}
}
