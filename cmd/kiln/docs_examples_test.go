package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docExample is a command the docs show, run against a test kiln serve (no engine, no GitHub).
type docExample struct {
	file string
	// cmd is the command's first line as the doc writes it, in an indented block; its
	// continuation lines (after a trailing \) are joined to it. curl runs through bash with KILN,
	// TOKEN and ORG set; kiln runs in-process, its --data .kiln the test's data directory, and
	// <organizationId> the last one an example answered. A "# {...}" comment right under the
	// command is the answer the doc shows: the real answer must have its keys, and its values
	// where the doc writes them whole (a string with "..." matches on the parts around it).
	cmd string
	// fields are keys the JSON answer has. says is instead an output the doc shows (up to a
	// "..." in it) for cmd, which the doc need not write out: the output, or kiln's error line,
	// starts with it.
	fields []string
	says   string
}

// docExamples are run in this order, each on the state the ones before left.
var docExamples = []docExample{
	{file: "README.md", cmd: `curl -s -H "Authorization: Bearer $TOKEN" $KILN/auth/me`, fields: []string{"user", "organization", "membership"}},
	{file: "README.md", cmd: `curl -s -X PATCH -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \`,
		fields: []string{"id", "name", "defaultProjectSettings"}},
	{file: "README.md", cmd: `curl -s -X POST -H "Authorization: Bearer $TOKEN" -d '{"name":"ci","expiresInDays":90}' $KILN/auth/tokens`,
		fields: []string{"token", "expiresAt"}},
	{file: "README.md", cmd: `curl -s -H "Authorization: Bearer $TOKEN" "$KILN/auth/tokens?limit=10"`, fields: []string{"items", "nextCursor"}},
	{file: "README.md", cmd: `curl -s -X PATCH -H "Authorization: Bearer $TOKEN" -d '{"nmae":"x"}' $KILN/organizations/$ORG`,
		fields: []string{"error", "message", "requestId", "fields"}},
	{file: "README.md", cmd: `kiln admin bootstrap --data .kiln --org "Second Studio" --email lead@second.example --name Lead`},
	{file: "README.md", cmd: `kiln admin user --data .kiln --org-id <organizationId> --email dev@second.example --name Dev --role member`},
	{file: "README.md", cmd: `kiln admin token --data .kiln --email owner@kiln.local`, fields: []string{"token", "organizationId", "userId"}},
	{file: "README.md", cmd: `kiln admin token --data .kiln --org-id <organizationId> --email dev@second.example`},
	{file: "docs/plans.md", cmd: `kiln admin plan --data .kiln --org-id <organizationId> --plan pro`, fields: []string{"organizationId", "plan"}},
	{file: "docs/plans.md", cmd: `kiln admin plan --data .kiln --org-id <organizationId> --plan enterprise --max-concurrent-builds 4`},
	{file: "docs/cli.md", cmd: "kiln builds trigger",
		says: "kiln builds trigger: missing SETTING (usage: kiln builds trigger [PROJECT] SETTING [--project P] [--branch B] [--commit C] [--changelist N] [--clean] [--follow])"},
	{file: "docs/cli.md", cmd: "kiln builds logs kNoSuchBuild", says: "kiln: build not found (not_found, HTTP 404, request id req_..."},
}

// TestDocsExamples runs the docs' example commands (docExamples) and compares their output with
// what the docs show.
func TestDocsExamples(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	p := startPlainService(t)
	vars := map[string]string{"KILN": p.svc.URL(), "TOKEN": p.owner}
	var me struct{ Organization struct{ ID string } }
	if err := json.Unmarshal([]byte(runDocCommand(t, p, vars, `curl -s -H "Authorization: Bearer $TOKEN" $KILN/auth/me`)), &me); err != nil {
		t.Fatal(err)
	}
	vars["ORG"] = me.Organization.ID

	for _, ex := range docExamples {
		doc := readDoc(t, ex.file)
		if ex.says != "" { // an output the doc shows, of a command it need not write out
			prefix, _, _ := strings.Cut(ex.says, "...")
			if !hasLine(doc, prefix) {
				t.Errorf("%s: no line %q", ex.file, ex.says)
			}
			if out := runDocCommand(t, p, vars, ex.cmd); !strings.HasPrefix(out, prefix) {
				t.Errorf("%s: %s\nprinted %q\nthe doc says %q", ex.file, ex.cmd, out, ex.says)
			}
			continue
		}
		cmd, shown, ok := docCommand(doc, ex.cmd)
		if !ok {
			t.Errorf("%s: no command %q (update docExamples with the doc)", ex.file, ex.cmd)
			continue
		}
		out := runDocCommand(t, p, vars, cmd)
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Errorf("%s: %s\nprinted %q, not JSON: %v", ex.file, cmd, out, err)
			continue
		}
		for _, f := range ex.fields {
			if _, ok := got[f]; !ok {
				t.Errorf("%s: %s\nanswered without %q: %s", ex.file, cmd, f, out)
			}
		}
		if shown != "" {
			var want any
			if err := json.Unmarshal([]byte(shown), &want); err != nil {
				t.Errorf("%s: the answer shown under %q is not JSON: %v\n%s", ex.file, ex.cmd, err, shown)
			}
			for _, diff := range shapeDiff("", want, got) {
				t.Errorf("%s: %s\nanswered %s\nwhich differs from the doc's answer at %s", ex.file, cmd, out, diff)
			}
		}
		if id, ok := got["organizationId"].(string); ok && vars["<organizationId>"] == "" { // the first one made
			vars["<organizationId>"] = id
		}
	}
}

// TestDocsAgreeWithTheMakefile: the README opens with the two commands `make run` and `make
// test`, and docs/cli.md names the file `make build` writes.
func TestDocsAgreeWithTheMakefile(t *testing.T) {
	readme, makefile := readDoc(t, "README.md"), readDoc(t, "Makefile")
	var first []string
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, "    ") {
			first = append(first, strings.Fields(l)[0]+" "+strings.Fields(l)[1])
		} else if len(first) > 0 {
			break
		}
	}
	if strings.Join(first, ", ") != "make run, make test" {
		t.Errorf("the README's first commands are %v, want make run and make test", first)
	}
	for _, target := range []string{"run", "test", "build"} {
		if !regexp.MustCompile(`(?m)^` + target + `:`).MatchString(makefile) {
			t.Errorf("the Makefile has no target %s", target)
		}
	}
	build := regexp.MustCompile(`(?m)^build:\n\t\$\(GO\) build -o (\S+) ./cmd/kiln$`).FindStringSubmatch(makefile)
	bin := regexp.MustCompile(`(?m)^BIN := (\S+)$`).FindStringSubmatch(makefile)
	if build == nil || bin == nil {
		t.Fatal("the Makefile's build target or BIN changed: update this test")
	}
	path := strings.ReplaceAll(build[1], "$(BIN)", bin[1])
	if cli := readDoc(t, "docs/cli.md"); !strings.Contains(cli, "`make build`\n(it writes `"+path+"`)") {
		t.Errorf("docs/cli.md does not say that make build writes %s", path)
	}
}

// readDoc reads a file of the repository.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docCommand finds the indented line first in doc and answers the whole command (with its
// continuation lines) and the answer shown under it ("# {" and the comment lines that go on
// with it), as JSON text, or "".
func docCommand(doc, first string) (cmd, shown string, ok bool) {
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "    ") || strings.TrimSpace(l) != first && !strings.HasPrefix(strings.TrimSpace(l), first+" ") {
			continue
		}
		cmd = strings.TrimSpace(l)
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd += "\n" + strings.TrimSpace(lines[i])
		}
		if c, _, found := strings.Cut(cmd, "  #"); found { // a comment after the command
			cmd = strings.TrimSpace(c)
		}
		for j := i + 1; j < len(lines); j++ {
			s := strings.TrimSpace(lines[j])
			if !strings.HasPrefix(s, "#") || shown == "" && !strings.HasPrefix(s, "# {") {
				break
			}
			shown += strings.TrimSpace(strings.TrimPrefix(s, "#"))
		}
		return cmd, shown, true
	}
	return "", "", false
}

// hasLine reports whether one of doc's lines starts with prefix (indentation aside).
func hasLine(doc, prefix string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return true
		}
	}
	return false
}

// runDocCommand runs a doc's command and answers its standard output; for kiln, an error line as
// kiln prints it when the command fails.
func runDocCommand(t *testing.T, p *plainService, vars map[string]string, cmd string) string {
	t.Helper()
	for k, v := range vars {
		if strings.HasPrefix(k, "<") {
			cmd = strings.ReplaceAll(cmd, k, v)
		}
	}
	if strings.HasPrefix(cmd, "curl ") {
		c := exec.Command("bash", "-c", cmd)
		c.Env = os.Environ()
		for k, v := range vars {
			if !strings.HasPrefix(k, "<") {
				c.Env = append(c.Env, k+"="+v)
			}
		}
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return string(out)
	}
	args := shellWords(strings.TrimPrefix(cmd, "kiln "))
	for i := range args {
		if args[i] == ".kiln" && i > 0 && args[i-1] == "--data" {
			args[i] = p.data
		}
	}
	var out, errOut bytes.Buffer
	env := func(k string) string {
		return map[string]string{"KILN_URL": vars["KILN"], "KILN_TOKEN": vars["TOKEN"]}[k]
	}
	if err := run(context.Background(), args, env, &out, &errOut); err != nil {
		return errorLine(err)
	}
	return out.String()
}
