package awslocal

import (
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestBuildCacheAcrossCodeBuildHosts: on aws-local, two builds of one key run on two CodeBuild hosts (separate
// processes and work directories): the first starts cold and saves its cache through the host
// API (a multipart upload to MinIO with presigned parts, under the API function's IAM policy);
// the second restores it from a presigned GET, so the stand-in engine finds every asset in the
// derived data cache and every compiled object, and the build resource says warm from the first.
func TestBuildCacheAcrossCodeBuildHosts(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.AWSLocal)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	w.Shooter.Commit("main", "Assets", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_ASSETS=30\nFAKE_UAT_COOK_MS=10\nFAKE_UAT_OBJECTS=5\nFAKE_UAT_COMPILE_MS=10\nFAKE_UAT_PAK_MB=0\n"})

	first := w.Trigger(t, pid, sid, "")
	b1 := w.WaitEnded(t, first)
	log1 := w.LogText(t, first)
	if b1["status"] != "complete" {
		t.Fatalf("first build %v: %v\n%s", b1["status"], b1["failureReason"], log1)
	}
	if c, _ := b1["cache"].(map[string]any); c["state"] != "cold" || !strings.Contains(log1, "misses 30 of 30 assets") ||
		!strings.Contains(log1, "kiln: saved the build cache") {
		t.Fatalf("first build: cache %v; want cold, every asset cooked and the cache saved:\n%s", b1["cache"], log1)
	}

	second := w.Trigger(t, pid, sid, "")
	b2 := w.WaitEnded(t, second)
	log2 := w.LogText(t, second)
	if b2["status"] != "complete" {
		t.Fatalf("second build %v: %v\n%s", b2["status"], b2["failureReason"], log2)
	}
	if c, _ := b2["cache"].(map[string]any); c["state"] != "warm" || c["fromBuildId"] != first {
		t.Errorf("second build: cache %v; want warm from %s", b2["cache"], first)
	}
	// Intermediate/ beside Shooter/Shooter.uproject came back too: nothing is compiled again.
	for _, want := range []string{"warm build: restored the build cache of build " + first, "hits 30 misses 0 of 30 assets", "Compile: 5 of 5 objects up to date"} {
		if !strings.Contains(log2, want) {
			t.Errorf("the second build's log lacks %q:\n%s", want, log2)
		}
	}
}
