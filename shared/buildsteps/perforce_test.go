package buildsteps

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/perforce"
)

// fakeP4Client builds the fake p4 of testdata beside a state file holding a stream with n files
// (edit changes the state), and returns a client for it that has trusted the server.
func fakeP4Client(t *testing.T, n int, edit ...func(state map[string]any)) *perforce.Client {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "p4")
	if out, err := exec.Command("go", "build", "-o", bin, "../../testdata/fakep4").CombinedOutput(); err != nil {
		t.Fatalf("build the fake p4: %v\n%s", err, out)
	}
	files := map[string]string{"//game/main/Game.uproject": "{}"}
	for i := 1; i < n; i++ {
		files[fmt.Sprintf("//game/main/Content/Asset%03d.uasset", i)] = fmt.Sprintf("asset %d", i)
	}
	state := map[string]any{
		"port": "tcp4:127.0.0.1:1666", "users": map[string]string{"builder": "TICKET"},
		"streams": []string{"//game/main"}, "files": files,
		"changes": []map[string]any{{"change": 7, "path": "//game/main/...", "desc": "Import the assets\n\n... and all of them.",
			"files": map[string]string{"//game/main/Content/Asset001.uasset": "asset 1, edited"}}},
	}
	for _, e := range edit {
		e(state)
	}
	b, _ := json.Marshal(state)
	if err := os.WriteFile(bin+".state.json", b, 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	server, err := perforce.ParseServerURL("tcp:127.0.0.1:1666")
	if err != nil {
		t.Fatal(err)
	}
	return &perforce.Client{P4: bin, Server: server, Address: "127.0.0.1:1666", User: "builder", Ticket: "TICKET", Dir: home}
}

func TestPerforceCheckout(t *testing.T) {
	ctx := context.Background()
	c := fakeP4Client(t, syncLinesLogged+50)
	a := &Steps{}
	in := CheckoutInput{Workspace: filepath.Join(t.TempDir(), "ws"),
		Perforce: &PerforceSource{Client: c, WorkspaceName: "kiln-test-main", Stream: "//game/main"}}

	rec := &recorder{}
	out, err := a.Checkout(ctx, in, rec)
	if err != nil {
		t.Fatalf("checkout: %v\nlog:\n%s", err, rec.text())
	}
	if out.Commit != "7" || out.CommitMessage != "Import the assets\n\n... and all of them." || out.Dir != in.Workspace {
		t.Fatalf("checkout output %+v", out)
	}
	if len(rec.stages) != 1 || rec.stages[0] != StageSync {
		t.Errorf("stages %v", rec.stages)
	}
	if b, err := os.ReadFile(filepath.Join(out.Dir, "Content", "Asset001.uasset")); err != nil || string(b) != "asset 1, edited" {
		t.Errorf("synced file: %q, %v", b, err)
	}
	// A first sync of a big stream: the first syncLinesLogged files are listed, the rest counted.
	listed := 0
	for _, l := range rec.at(LevelInfo) {
		if strings.HasPrefix(l, "//game/main/") {
			listed++
		}
	}
	if listed != syncLinesLogged || !strings.Contains(rec.text(), fmt.Sprintf("Synced //game/main@7: %d files changed (50 more not listed)", syncLinesLogged+50)) {
		t.Errorf("%d file lines listed; log:\n%s", listed, rec.text())
	}

	// The same changelist again in the reused workspace: nothing to transfer; a build output
	// that is not in the depot stays.
	if err := os.MkdirAll(filepath.Join(out.Dir, "Intermediate"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out.Dir, "Intermediate", "obj.o"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	in.Perforce.Changelist = "7"
	rec = &recorder{}
	if _, err := a.Checkout(ctx, in, rec); err != nil || !strings.Contains(rec.text(), "The workspace already holds //game/main@7") {
		t.Fatalf("second checkout: %v\nlog:\n%s", err, rec.text())
	}
	if _, err := os.Stat(filepath.Join(out.Dir, "Intermediate", "obj.o")); err != nil {
		t.Errorf("the compile intermediates were removed: %v", err)
	}

	// A workspace directory that lost its files (a disk cleaned up) gets them all back, although
	// the server records them as synced.
	if err := os.RemoveAll(out.Dir); err != nil {
		t.Fatal(err)
	}
	rec = &recorder{}
	if _, err := a.Checkout(ctx, in, rec); err != nil {
		t.Fatalf("checkout into a wiped directory: %v\nlog:\n%s", err, rec.text())
	}
	if b, err := os.ReadFile(filepath.Join(out.Dir, "Game.uproject")); err != nil || string(b) != "{}" {
		t.Fatalf("after a wipe the workspace lacks its files: %q, %v\nlog:\n%s", b, err, rec.text())
	}

	// Refused before p4 runs: a changelist that is not a number.
	in.Perforce.Changelist = "7 -f"
	if _, err := a.Checkout(ctx, in, &recorder{}); err == nil {
		t.Error("a changelist with an option in it was accepted")
	}
}

// A server that sends files outside the workspace fails the checkout with a reason, and p4
// writes none of them.
func TestPerforceCheckoutRefusesFilesOutsideTheWorkspace(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "elsewhere")
	c := fakeP4Client(t, 3, func(state map[string]any) { state["syncRoot"] = outside })
	in := CheckoutInput{Workspace: filepath.Join(t.TempDir(), "ws"),
		Perforce: &PerforceSource{Client: c, WorkspaceName: "kiln-test-main", Stream: "//game/main"}}
	rec := &recorder{}
	_, err := (&Steps{}).Checkout(context.Background(), in, rec)
	if err == nil || !strings.Contains(err.Error(), "outside the build's workspace") {
		t.Fatalf("checkout: %v\nlog:\n%s", err, rec.text())
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("p4 wrote outside the workspace: %v", err)
	}
}
