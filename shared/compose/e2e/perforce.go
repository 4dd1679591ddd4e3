package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const (
	P4Ticket      = "6F1C0C3E9B0D4A2F8E7D6C5B4A392817"
	p4Fingerprint = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01"
)

// fakeP4 builds the fake p4 of testdata beside its state file and returns its path.
func FakeP4(t *testing.T, d Deployment) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "p4")
	if out, err := exec.Command("go", "build", "-o", bin, RepoPath("testdata", "fakep4")).CombinedOutput(); err != nil {
		t.Fatalf("build the fake p4: %v\n%s", err, out)
	}
	state := map[string]any{
		"port": "ssl4:127.0.0.1:1666", "ssl": true, "fingerprint": p4Fingerprint,
		"users":   map[string]string{"builder": P4Ticket},
		"streams": []string{"//game/main"},
		"files": map[string]string{
			"//game/main/Shooter/Shooter.uproject": `{"EngineAssociation": "5.3", "Modules": [{"Name": "Shooter", "Type": "Runtime", "LoadingPhase": "Default"}]}`,
			"//game/main/Tools/Editor.uproject":    `{"EngineAssociation": "5.3"}`,
		},
	}
	b, _ := json.Marshal(state)
	if err := os.WriteFile(bin+".state.json", b, 0o600); err != nil {
		t.Fatal(err)
	}
	shareWithHosts(t, d, filepath.Dir(bin), 0o777) // the fake writes its log and clients beside itself
	shareWithHosts(t, d, bin+".state.json", 0o644)
	if d == AWSLocal && os.Geteuid() == 0 { // its log is appended to by the service (root) and the hosts
		if err := os.WriteFile(bin+".log", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		shareWithHosts(t, d, bin+".log", 0o666)
	}
	return bin
}
