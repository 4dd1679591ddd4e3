package openapitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestUncoveredInIsTheUnionOfEveryFile(t *testing.T) {
	ops := Coverage()
	if len(ops) < 2 {
		t.Fatalf("document has %d operations", len(ops))
	}
	var all []string
	for op := range ops {
		all = append(all, op)
	}
	slices.Sort(all)
	write := func(dir, name string, covered []string) {
		m := map[string]int{}
		for _, op := range all {
			m[op] = 0
		}
		for _, op := range covered {
			m[op] = 3
		}
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name  string
		files map[string][]string
		want  []string
	}{
		{"split across two files", map[string][]string{"a": all[:1], "b": all[1:]}, nil},
		{"one missing", map[string][]string{"a": all[1:2], "b": all[2:]}, all[:1]},
		{"none", map[string][]string{"a": nil}, all},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, covered := range tt.files {
				write(dir, name, covered)
			}
			got, err := UncoveredIn(dir)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("UncoveredIn = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if _, err := UncoveredIn(t.TempDir()); err == nil {
		t.Fatal("an empty directory counted as covered")
	}
}
