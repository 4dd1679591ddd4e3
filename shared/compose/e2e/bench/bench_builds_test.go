package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// BenchmarkBuildList measures GET /builds under concurrent load, on the embedded store with 1,000
// and with 100,000 builds, beside a bare net/http handler that returns a fixed page of the same
// size, all in one run. It prints p50/p99 latency and requests/s, and the ratios to the bare
// handler. Target: p50 within 3x the bare handler; latency flat from 1k to 100k.
func BenchmarkBuildList(b *testing.B) {
	small := seedBuilds(b, 1_000)
	large := seedBuilds(b, 100_000)
	page := fetch(b, large.url+"/builds?limit=25", large.token)
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(page)
	}))
	b.Cleanup(bare.Close)

	type scenario struct {
		name, url, token string
	}
	scenarios := []scenario{
		{"bare-handler", bare.URL + "/builds?limit=25", ""},
		{"1k-limit=25", small.url + "/builds?limit=25", small.token},
		{"100k-limit=25", large.url + "/builds?limit=25", large.token},
		{"1k-status=complete&platform=Win64", small.url + "/builds?status=complete&platform=Win64&limit=25", small.token},
		{"100k-status=complete&platform=Win64", large.url + "/builds?status=complete&platform=Win64&limit=25", large.token},
	}
	results := map[string]loadResult{}
	for _, sc := range scenarios {
		b.Run(sc.name, func(b *testing.B) {
			res := runLoad(b, sc.url, sc.token)
			b.ReportMetric(float64(res.p50.Microseconds()), "p50-µs")
			b.ReportMetric(float64(res.p99.Microseconds()), "p99-µs")
			b.ReportMetric(res.rps, "req/s")
			results[sc.name] = res
		})
	}
	base := results["bare-handler"]
	var out strings.Builder
	fmt.Fprintf(&out, "\nGET /builds, %d concurrent clients, page of %d bytes\n", loadClients, len(page))
	fmt.Fprintf(&out, "%-38s %10s %10s %10s %12s\n", "scenario", "p50", "p99", "req/s", "p50 / bare")
	for _, sc := range scenarios {
		r := results[sc.name]
		fmt.Fprintf(&out, "%-38s %10s %10s %10.0f %11.2fx\n", sc.name, r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.rps, float64(r.p50)/float64(base.p50))
	}
	for _, q := range []string{"limit=25", "status=complete&platform=Win64"} {
		s, l := results["1k-"+q], results["100k-"+q]
		fmt.Fprintf(&out, "100k / 1k p50 for %s: %.2fx\n", q, float64(l.p50)/float64(s.p50))
	}
	fmt.Print(out.String())
}

// loadClients is how many goroutines send requests at once.
const loadClients = 8

type loadResult struct {
	p50, p99 time.Duration
	rps      float64
}

// runLoad sends b.N requests from loadClients goroutines over kept-alive connections.
func runLoad(b *testing.B, url, token string) loadResult {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadClients}}
	defer client.CloseIdleConnections()
	lat := make([]time.Duration, 0, b.N)
	var mu sync.Mutex
	b.SetParallelism((loadClients + 1) / 2)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 256)
		for pb.Next() {
			t0 := time.Now()
			req, _ := http.NewRequest("GET", url, nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(lat) == 0 {
		return loadResult{}
	}
	return loadResult{p50: median(lat), p99: percentile(lat, 99), rps: float64(len(lat)) / elapsed.Seconds()}
}

type seeded struct {
	url, token string
}

// seedBuilds serves the API over a fresh embedded store holding n builds of mixed status,
// platform and build type.
func seedBuilds(b *testing.B, n int) seeded {
	b.Helper()
	ctx := context.Background()
	st, org, token := benchOrg(b)
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	projects := []string{kiln.NewID(), kiln.NewID(), kiln.NewID()}
	t0 := time.Now().Add(-time.Duration(n) * time.Second)
	var ids kiln.IDGenerator
	for i := 0; i < n; i++ {
		at := t0.Add(time.Duration(i) * time.Second).UTC().Truncate(time.Millisecond)
		bld := &kiln.Build{
			ID: ids.New(at), OrganizationID: org, ProjectID: projects[rng.IntN(len(projects))], BuildSettingID: kiln.NewID(),
			Status:   kiln.BuildStatuses[rng.IntN(len(kiln.BuildStatuses))],
			Platform: kiln.Platforms[rng.IntN(len(kiln.Platforms))], BuildType: kiln.BuildTypes[rng.IntN(len(kiln.BuildTypes))],
			Branch: "main", Commit: fmt.Sprintf("%040x", i), UEVersion: "5.3", TriggeredBy: "cron", CreatedAt: at,
		}
		if err := st.CreateBuild(ctx, bld); err != nil {
			b.Fatal(err)
		}
	}
	keys, _ := keyring.New(make([]byte, keyring.MasterKeySize))
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Keys: keys, Logger: e2e.DiscardLogger(), AuthCacheTTL: serve.AuthCacheTTL}))
	b.Cleanup(srv.Close)
	return seeded{url: srv.URL, token: token}
}

func fetch(b *testing.B, url, token string) []byte {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		b.Fatalf("%d %s", resp.StatusCode, body)
	}
	return body
}
