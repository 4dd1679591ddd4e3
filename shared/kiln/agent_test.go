package kiln

import "testing"

func TestValidatePoolReservesKilnsPools(t *testing.T) {
	for _, tc := range []struct {
		pool string
		ok   bool
	}{
		{"win64-ue5.4", true},
		{"kiln", true},
		{"kilns-box", true},
		{HostedPoolWin64, false},
		{"kiln-other", false},
		{"Win64", false},
	} {
		errs := FieldErrors{}
		ValidatePool("agentPool", tc.pool, errs)
		if got := len(errs) == 0; got != tc.ok {
			t.Errorf("ValidatePool(%q): ok = %v, want %v (%v)", tc.pool, got, tc.ok, errs)
		}
	}
	if !ReservedPool(HostedPoolWin64) {
		t.Errorf("the hosted pool is not reserved")
	}
	hosted := &Agent{Credential: Credential{ID: "i-0abc"}, Hosted: true}
	if got := hosted.BuildHost(); got != "ec2:i-0abc" {
		t.Errorf("hosted BuildHost = %q", got)
	}
	if got := (&Agent{Credential: Credential{ID: "a1"}}).BuildHost(); got != AgentHost("a1") {
		t.Errorf("agent BuildHost = %q", got)
	}
}
