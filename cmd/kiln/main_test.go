package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestAdminCommands(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"admin", "bootstrap", "--data", dir, "--org", "Studio", "--email", "lead@studio.example", "--name", "Lead"}, &out, &errOut); err != nil {
		t.Fatalf("bootstrap: %v (%s)", err, errOut.String())
	}
	var boot map[string]string
	if err := json.Unmarshal(out.Bytes(), &boot); err != nil || boot["token"] == "" || boot["organizationId"] == "" || boot["userId"] == "" {
		t.Fatalf("bootstrap printed %q", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"admin", "user", "--data", dir, "--org-id", boot["organizationId"], "--email", "dev@studio.example", "--name", "Dev", "--role", "viewer"}, &out, &errOut); err != nil {
		t.Fatalf("user: %v", err)
	}
	var user map[string]string
	if err := json.Unmarshal(out.Bytes(), &user); err != nil || user["token"] == "" || user["userId"] == "" || len(user) != 2 {
		t.Fatalf("user printed %q", out.String())
	}
}

func TestCommandErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "help"},
		{"unknown command", []string{"deploy"}, "unknown command"},
		{"admin without command", []string{"admin"}, "bootstrap or user"},
		{"missing flag", []string{"admin", "bootstrap", "--data", dir, "--org", "X", "--email", "a@b.example"}, "--name is required"},
		{"bad role", []string{"admin", "user", "--data", dir, "--org-id", "x", "--email", "a@b.example", "--name", "A", "--role", "root"}, "not found"},
		{"bad setting", []string{"serve", "--workers", "0"}, "KILN_WORKERS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), tt.args, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q on failure", out.String())
			}
		})
	}
}
