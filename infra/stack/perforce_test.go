package stack_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/infra/stack"
)

// TestP4Layer: with a p4 client given, the functions that check Perforce (the API) get it as a
// layer, at /opt/bin/p4, named by KILN_P4; the others get neither. Without one (the other
// stack), no function has a layer or KILN_P4: Perforce checks answer 503.
func TestP4Layer(t *testing.T) {
	layer := idOf(t, "AWS::Lambda::LayerVersion", "P4Layer")
	lp := resources(t, "AWS::Lambda::LayerVersion")[layer]["Properties"].(obj)
	if !equalJSON(lp["CompatibleArchitectures"], []any{"arm64"}) {
		t.Errorf("layer architectures %s, want arm64", jsonString(lp["CompatibleArchitectures"]))
	}
	for name := range map[string]bool{"api": true, "task": false, "ended": false, "schedule": false, "deliver": false, "admin": false} {
		fn := resources(t, "AWS::Lambda::Function")[functionLogicalID(t, name)]["Properties"].(obj)
		env, _ := fn["Environment"].(obj)["Variables"].(obj)
		checks := false
		for _, p := range stack.PerforceFunctions {
			checks = checks || p == name
		}
		if checks {
			if !equalJSON(fn["Layers"], []any{ref(layer)}) || env["KILN_P4"] != stack.LayerP4Path {
				t.Errorf("%s: layers %s, KILN_P4 %v; want the p4 layer at %s", name, jsonString(fn["Layers"]), env["KILN_P4"], stack.LayerP4Path)
			}
		} else if fn["Layers"] != nil || env["KILN_P4"] != nil {
			t.Errorf("%s: layers %s, KILN_P4 %v; want none", name, jsonString(fn["Layers"]), env["KILN_P4"])
		}
	}
	if stack.LayerP4Path != "/opt/bin/p4" {
		t.Errorf("LayerP4Path %s: a layer's bin/p4 is /opt/bin/p4", stack.LayerP4Path)
	}
	all := *other.ToJSON()
	for id, r := range all["Resources"].(map[string]any) {
		r := r.(obj)
		if r["Type"] == "AWS::Lambda::LayerVersion" || strings.Contains(jsonString(r), "KILN_P4") {
			t.Errorf("without kiln:p4 the stack has %s %s", r["Type"], id)
		}
	}
}

// TestP4Context: kiln:p4 must name a Linux arm64 executable; anything else fails the synth.
func TestP4Context(t *testing.T) {
	text := t.TempDir() + "/p4.txt"
	if err := os.WriteFile(text, []byte("not a binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable() // this test binary: Linux, but not arm64 on the test machines
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{text, "is not a Linux executable"},
		{t.TempDir() + "/none", "is not a Linux executable"},
		{self, "the functions run on Linux arm64"},
	} {
		_, err := stack.PropsFromContext(func(key string) any {
			if key == stack.ContextP4 {
				return tc.path
			}
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("kiln:p4 %s: %v, want %q", tc.path, err, tc.want)
		}
	}
}
