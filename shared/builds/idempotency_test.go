package builds

import (
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestClientIdempotency(t *testing.T) {
	base := func() TriggerRequest {
		return TriggerRequest{
			Project: &kiln.Project{ID: "p1"}, Setting: &kiln.BuildSetting{ID: "s1"},
			Branch: "main", Commit: "abc1234", Changelist: "", TriggeredBy: "user:u1",
			ClientKey: ClientKey{UserID: "u1", Key: "k1"},
		}
	}
	wantKey, wantPrint := clientIdempotency(base())
	if wantKey != "trigger:u1:k1" {
		t.Fatalf("key = %q, want trigger:u1:k1", wantKey)
	}
	if len(wantPrint) != 64 {
		t.Fatalf("fingerprint = %q, want a hex sha-256", wantPrint)
	}
	tests := []struct {
		name      string
		change    func(r *TriggerRequest)
		samePrint bool
		sameKey   bool
	}{
		{"same request", func(r *TriggerRequest) {}, true, true},
		{"same request, another project object", func(r *TriggerRequest) { r.Project = &kiln.Project{ID: "p1"} }, true, true},
		{"another key", func(r *TriggerRequest) { r.ClientKey.Key = "k2" }, true, false},
		{"another caller", func(r *TriggerRequest) { r.ClientKey.UserID = "u2" }, false, false},
		{"another setting", func(r *TriggerRequest) { r.Setting = &kiln.BuildSetting{ID: "s2"} }, false, true},
		{"another branch", func(r *TriggerRequest) { r.Branch = "dev" }, false, true},
		{"no branch", func(r *TriggerRequest) { r.Branch = "" }, false, true},
		{"another commit", func(r *TriggerRequest) { r.Commit = "abc1235" }, false, true},
		{"a changelist", func(r *TriggerRequest) { r.Changelist = "42" }, false, true},
		{"a re-run", func(r *TriggerRequest) { r.RerunOf = "b1" }, false, true},
		// The fields are separated, so moving text from one to the next is another request.
		{"text moved between fields", func(r *TriggerRequest) { r.Branch, r.Commit = "mainabc", "1234" }, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base()
			tt.change(&r)
			key, print := clientIdempotency(r)
			if (print == wantPrint) != tt.samePrint {
				t.Errorf("fingerprint same = %v, want %v", print == wantPrint, tt.samePrint)
			}
			if (key == wantKey) != tt.sameKey {
				t.Errorf("key %q same = %v, want %v", key, key == wantKey, tt.sameKey)
			}
		})
	}
}

func TestValidClientKey(t *testing.T) {
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"", true}, {"abc-123", true}, {strings.Repeat("k", 255), true},
		{strings.Repeat("k", 256), false}, {"a\nb", false}, {"a\rb", false},
	} {
		if got := ValidClientKey(tt.key); got != tt.want {
			t.Errorf("ValidClientKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}
