package hostclient_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestEphemeralHostsBuildWarm: two builds of one key on two ephemeral hosts (separate work
// directories, as two CodeBuild containers): the first builds cold and saves its cache through
// the host API; the second restores it, the stand-in engine compiles nothing and finds every
// asset in the derived data cache, and the build resource says warm from the first. A clean
// build then ignores the cache, and replaces it. With presigned URLs (S3) and through the service
// (kiln serve's file store).
func TestEphemeralHostsBuildWarm(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		t.Run("streamed="+strconv.FormatBool(streamed), func(t *testing.T) { ephemeralHostsBuildWarm(t, streamed) })
	}
}

func ephemeralHostsBuildWarm(t *testing.T, streamed bool) {
	s := newService(t)
	withCaches(t, s, streamed)
	s.gh.AddRepo(installation, "studio/warm", true, "main").Commit("main", "Warm", "Ada Lovelace", map[string]string{
		// At the repository's root: the runner caches the checkout's Intermediate/, while the
		// engine keeps its objects beside the .uproject.
		"Warm.uproject":        `{"EngineAssociation": "5.3"}`,
		"Source/Warm/Warm.cpp": "// game\n",
		"FakeUAT.env":          "FAKE_UAT_OBJECTS=20\nFAKE_UAT_COMPILE_MS=20\nFAKE_UAT_ASSETS=40\nFAKE_UAT_COOK_MS=20\n",
	})
	p, setting := s.addProject(t, "studio/warm", "Warm.uproject")

	run := func(name string, clean bool) (*kiln.Build, string, time.Duration) {
		b, cred := s.claimedWith(t, p, setting, func(b *kiln.Build) { b.Clean = clean })
		start := time.Now()
		status, err := s.host(t, cred, "kiln-hosts:"+name).Run(t.Context()) // a fresh work dir
		took := time.Since(start)
		if err != nil || status != kiln.StatusComplete {
			t.Fatalf("%s: Run = %q, %v; want complete", name, status, err)
		}
		lines, err := s.logs.Read(t.Context(), s.orgID, b.ID, 1, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for _, l := range lines {
			text.WriteString(l.Message + "\n")
		}
		return s.build(t, b.ID), text.String(), took
	}

	first, log1, took1 := run("first", false)
	if first.Cache != kiln.CacheCold || first.CacheReason != kiln.CacheReasonNone {
		t.Errorf("first build: cache %q (%q); want cold, none saved yet", first.Cache, first.CacheReason)
	}
	for _, want := range []string{"misses 40 of 40 assets", "kiln: saved the build cache"} {
		if !strings.Contains(log1, want) {
			t.Errorf("the first build's log lacks %q:\n%s", want, log1)
		}
	}

	second, log2, took2 := run("second", false)
	if second.Cache != kiln.CacheWarm || second.CacheFrom != first.ID || second.CommitMessage != "Warm" {
		t.Errorf("second build: cache %q from %q (%q), commit message %q; want warm from %s, the message kept",
			second.Cache, second.CacheFrom, second.CacheReason, second.CommitMessage, first.ID)
	}
	for _, want := range []string{
		"warm build: restored the build cache of build " + first.ID,
		"Compile: 20 of 20 objects up to date",
		"hits 40 misses 0 of 40 assets",
	} {
		if !strings.Contains(log2, want) {
			t.Errorf("the second build's log lacks %q:\n%s", want, log2)
		}
	}
	t.Logf("cold build %s, warm build %s", took1.Round(time.Millisecond), took2.Round(time.Millisecond))

	// A clean build ignores the cache on a remote host too, and its cache replaces the last.
	third, log3, _ := run("clean", true)
	if third.Cache != kiln.CacheCold || third.CacheReason != kiln.CacheReasonClean || !strings.Contains(log3, "misses 40 of 40 assets") {
		t.Errorf("clean build: cache %q (%q); want cold, clean asked for, every asset cooked:\n%s", third.Cache, third.CacheReason, log3)
	}
	if fourth, _, _ := run("fourth", false); fourth.CacheFrom != third.ID {
		t.Errorf("after the clean build: warm from %q, want %s", fourth.CacheFrom, third.ID)
	}
}
