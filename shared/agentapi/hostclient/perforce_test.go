package hostclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
)

const (
	p4Ticket      = "6F1C0C3E9B0D4A2F8E7D6C5B4A392817"
	p4Fingerprint = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01"
)

// TestRemoteHostBuildsAPerforceStream: a Perforce build on a remote host syncs the changelist
// with the organization's saved login handed on by the service, and records it.
func TestRemoteHostBuildsAPerforceStream(t *testing.T) {
	s := newService(t)
	ctx := t.Context()
	bin := filepath.Join(t.TempDir(), "p4")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../testdata/fakep4").CombinedOutput(); err != nil {
		t.Fatalf("build the fake p4: %v\n%s", err, out)
	}
	state, _ := json.Marshal(map[string]any{
		"port": "ssl4:127.0.0.1:1666", "ssl": true, "fingerprint": p4Fingerprint,
		"users":   map[string]string{"builder": p4Ticket},
		"streams": []string{"//game/main"},
		"files": map[string]string{
			"//game/main/Shooter/Shooter.uproject": `{"EngineAssociation": "5.3"}`,
			"//game/main/Shooter/Version.txt":      "cl-1\n",
		},
		"changes": []map[string]any{{"change": 10, "path": "//game/main/...", "desc": "Reload",
			"files": map[string]string{"//game/main/Shooter/Version.txt": "cl-10\n"}}},
	})
	if err := os.WriteFile(bin+".state.json", state, 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.New(bytes.Repeat([]byte{3}, keyring.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	s.server.OpenSealed = keys.Sealer().Open
	if _, err := s.store.SetPerforce(ctx, s.orgID, &kiln.PerforceCredentials{ServerURL: "ssl:127.0.0.1:1666", UserName: "builder",
		Ticket: keys.Sealer().Seal([]byte(p4Ticket), perforce.TicketAD(s.orgID)), Fingerprint: p4Fingerprint}, time.Now()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	p := &kiln.Project{ID: kiln.NewID(), OrganizationID: s.orgID, Name: "Shooter", SourceControl: kiln.SourcePerforce, RepoLink: "//game/main",
		Depot: "//game", StreamPath: "//game/main", UprojectPath: "Shooter/Shooter.uproject", CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateProject(ctx, p, 0); err != nil {
		t.Fatal(err)
	}
	st := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: s.orgID, ProjectID: p.ID, Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeShipping, Branch: "//game/main", UEVersion: "5.3", Trigger: kiln.TriggerManual, CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateBuildSetting(ctx, st); err != nil {
		t.Fatal(err)
	}
	b, cred := s.claimed(t, p, st)
	h := s.host(t, cred, "")
	h.P4 = &perforce.Verifier{P4: bin, Dir: t.TempDir(), Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Timeout: 30 * time.Second}
	status, err := h.Run(context.Background())
	if err != nil || status != kiln.StatusComplete {
		lines, _ := s.logs.Read(ctx, s.orgID, b.ID, 1, 1000)
		t.Fatalf("Run = %q, %v; log: %+v", status, err, lines)
	}
	if got := s.build(t, b.ID); got.Changelist != "10" || got.Commit != "10" {
		t.Errorf("build changelist %q commit %q, want 10", got.Changelist, got.Commit)
	}
}
