package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func noEnv(string) string { return "" }

func TestAdminCommands(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"admin", "bootstrap", "--data", dir, "--org", "Studio", "--email", "lead@studio.example", "--name", "Lead"}, noEnv, &out, &errOut); err != nil {
		t.Fatalf("bootstrap: %v (%s)", err, errOut.String())
	}
	var boot map[string]string
	if err := json.Unmarshal(out.Bytes(), &boot); err != nil || boot["token"] == "" || boot["organizationId"] == "" || boot["userId"] == "" {
		t.Fatalf("bootstrap printed %q", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"admin", "user", "--data", dir, "--org-id", boot["organizationId"], "--email", "dev@studio.example", "--name", "Dev", "--role", "viewer"}, noEnv, &out, &errOut); err != nil {
		t.Fatalf("user: %v", err)
	}
	var user map[string]string
	if err := json.Unmarshal(out.Bytes(), &user); err != nil || user["token"] == "" || user["userId"] == "" || len(user) != 2 {
		t.Fatalf("user printed %q", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"admin", "token", "--data", dir, "--org-id", boot["organizationId"], "--email", "lead@studio.example"}, noEnv, &out, &errOut); err != nil {
		t.Fatalf("token: %v", err)
	}
	var tok map[string]string
	if err := json.Unmarshal(out.Bytes(), &tok); err != nil || tok["token"] == "" || tok["token"] == boot["token"] || tok["userId"] != boot["userId"] {
		t.Fatalf("token printed %q", out.String())
	}
}

func TestAdminReadsKILN_DATA(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(t.TempDir()) // where ./.kiln would wrongly be made
	env := func(k string) string {
		if k == "KILN_DATA" {
			return dir
		}
		return ""
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"admin", "bootstrap", "--org", "Studio", "--email", "lead@studio.example", "--name", "Lead"}, env, &out, &errOut); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kiln.db")); err != nil {
		t.Errorf("KILN_DATA was not used: %v", err)
	}
	if _, err := os.Stat(".kiln"); err == nil {
		t.Error("wrote to ./.kiln although KILN_DATA was set")
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"admin", "--help"}, {"admin", "token", "--help"}, {"serve", "--help"}, {"serve", "-h"}} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, noEnv, &out, &errOut)
		if code := exitCode(err); code != 0 {
			t.Errorf("kiln %s exits %d (%v)", strings.Join(args, " "), code, err)
		}
		if out.Len()+errOut.Len() == 0 {
			t.Errorf("kiln %s printed no help", strings.Join(args, " "))
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, noEnv, &out, &out); err != nil {
		t.Fatal(err)
	}
	if v := out.String(); !strings.HasPrefix(v, "kiln ") || !strings.Contains(v, " commit ") || !strings.Contains(v, runtime.Version()) {
		t.Errorf("--version printed %q", v)
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
		{"admin without command", []string{"admin"}, "bootstrap, user, token or plan"},
		{"missing flag", []string{"admin", "bootstrap", "--data", dir, "--org", "X", "--email", "a@b.example"}, "--name is required"},
		{"bad role", []string{"admin", "user", "--data", dir, "--org-id", "x", "--email", "a@b.example", "--name", "A", "--role", "root"}, "not found"},
		{"token without email", []string{"admin", "token", "--data", dir}, "--email is required"},
		{"missing data directory", []string{"admin", "token", "--data", filepath.Join(dir, "typo"), "--email", "a@b.example"}, "does not exist"},
		{"bad setting", []string{"serve", "--workers", "0"}, "KILN_WORKERS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), tt.args, noEnv, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.want) || exitCode(err) == 0 {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q on failure", out.String())
			}
		})
	}
}

// TestHelpListsCustomerCommandsFirst: kiln help starts with what a studio's build engineer runs
// (builds, artifacts, settings, members), then the operator's commands.
func TestHelpListsCustomerCommandsFirst(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"help"}, func(string) string { return "" }, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	last := -1
	for _, cmd := range []string{"kiln login", "kiln builds list", "kiln artifacts download", "kiln members list", "kiln usage", "For operators", "kiln serve", "kiln admin bootstrap", "kiln agent run"} {
		i := strings.Index(help, "\n  "+cmd)
		if cmd == "For operators" {
			i = strings.Index(help, "\nFor operators")
		}
		if i < 0 || i < last {
			t.Fatalf("kiln help: %q missing or out of order (customers first, then operators):\n%s", cmd, help)
		}
		last = i
	}
}
