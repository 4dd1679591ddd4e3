package engines

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"5.3", "5.4.1", "notaversion"} {
		p := filepath.Join(root, v, RunUATPath)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "5.5"), 0o755); err != nil { // no RunUAT.sh
		t.Fatal(err)
	}
	d := Dir{Path: root}
	versions, err := d.Versions(context.Background())
	if err != nil || len(versions) != 2 || versions[0] != "5.3" || versions[1] != "5.4.1" {
		t.Fatalf("versions %v, %v", versions, err)
	}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"5.3", "5.3", true},
		{"5.3.2", "5.3", true},
		{"5.4.1", "5.4.1", true},
		{"5.4", "", false},
		{"5.4.2", "", false},
		{"5.5", "", false},
		{"5", "", false},
	}
	for _, tt := range tests {
		got, ok, err := d.Resolve(context.Background(), tt.in)
		if err != nil || got != tt.want || ok != tt.ok {
			t.Errorf("Resolve(%s) = %q %v %v, want %q %v", tt.in, got, ok, err, tt.want, tt.ok)
		}
	}
	if v, err := (Dir{Path: filepath.Join(root, "missing")}).Versions(context.Background()); err != nil || len(v) != 0 {
		t.Errorf("missing dir: %v %v", v, err)
	}
}
