package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/client/liveclient"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// runningBuild stores a build that runs without a runner: the bench writes its lines.
func runningBuild(b *testing.B, st store.Store, orgID, projectID, settingID string) *kiln.Build {
	now := time.Now().UTC()
	bd := &kiln.Build{ID: kiln.NewID(), OrganizationID: orgID, ProjectID: projectID, BuildSettingID: settingID,
		Status: kiln.StatusRunning, Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main",
		UEVersion: "5.3", TriggeredBy: "bench", CreatedAt: now, StartedAt: &now, HeartbeatAt: &now, Host: "bench"}
	if err := st.CreateBuild(context.Background(), bd); err != nil {
		b.Fatal(err)
	}
	return bd
}

// BenchmarkLiveLineLatency: a line written to a running build's log → received, by a socket
// (build:log, the Go client) and by the JSON long-poll (GET /builds/:id/logs?format=json&wait=20),
// the two measured on the same lines. On kiln serve the line is written by the service's runner
// log writer; on aws-local by the API function's host API writer, as a host's appends are (as
// the API function's role: DynamoDB, then the @connections API). Targets: the socket's p99 under
// 50 ms on kiln serve, under 1 s on aws-local.
func BenchmarkLiveLineLatency(b *testing.B) {
	for _, d := range []e2e.Deployment{e2e.Serve, e2e.AWSLocal} {
		b.Run(d.String(), func(b *testing.B) {
			ctx := context.Background()
			w := e2e.NewWorld(b, d)
			pid := w.AddShooter(b)
			sid := w.AddSetting(b, pid, map[string]any{})["id"].(string)
			var st store.Store
			var logs builds.LogWriter
			if d == e2e.AWSLocal {
				st, logs = w.AWS.Store(), w.AWS.LogWriter()
			} else {
				st, logs = w.Service.Store(), w.Service.LogWriter()
			}
			bd := runningBuild(b, st, w.OrgID, pid, sid)
			sock, err := liveclient.Dial(ctx, w.URL(), w.Token, liveclient.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer sock.Close()
			if err := sock.Join(ctx, bd.ID, liveclient.NoReplay); err != nil {
				b.Fatal(err)
			}
			measureLines(b, w, bd, logs, sock, 200)
		})
	}
}

// measureLines writes n lines one at a time and measures when the socket and the long-poll get
// each; it reports both p50 and p99.
func measureLines(b *testing.B, w *e2e.World, bd *kiln.Build, logs builds.LogWriter, sock *liveclient.Client, n int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	written := map[int64]time.Time{}
	var bySocket, byPoll []time.Duration
	socketGot, pollGot := make(chan int64, n+16), make(chan int64, n+16)
	go func() {
		for {
			e, err := sock.Next(ctx)
			if err != nil {
				return
			}
			if e.Log != nil {
				socketGot <- e.Log.Seq
			}
		}
	}()
	go longPoll(ctx, w, bd.ID, func(seq int64) { pollGot <- seq })
	last, err := logs.Last(ctx, bd.OrganizationID, bd.ID)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range n {
		seq := last + int64(i) + 1
		mu.Lock()
		written[seq] = time.Now()
		mu.Unlock()
		if err := logs.Append(ctx, bd.OrganizationID, bd.ID, seq, kiln.LogLine{Time: time.Now(), Level: kiln.LevelInfo, Message: "line " + strconv.FormatInt(seq, 10)}); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < 2; {
			select {
			case s := <-socketGot:
				if s == seq {
					bySocket = append(bySocket, time.Since(written[seq]))
					got++
				}
			case s := <-pollGot:
				if s == seq {
					byPoll = append(byPoll, time.Since(written[seq]))
					got++
				}
			case <-time.After(30 * time.Second):
				b.Fatalf("line %d: not received within 30 s (socket %d, long-poll %d so far)", seq, len(bySocket), len(byPoll))
			}
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(bySocket, 50)), "socket-p50-ms")
	b.ReportMetric(ms(percentile(bySocket, 99)), "socket-p99-ms")
	b.ReportMetric(ms(percentile(byPoll, 50)), "longpoll-p50-ms")
	b.ReportMetric(ms(percentile(byPoll, 99)), "longpoll-p99-ms")
	fmt.Fprintf(os.Stderr, "%s on %s, %d lines: socket p50 %.1f ms p99 %.1f ms; JSON long-poll p50 %.1f ms p99 %.1f ms (p99 socket/long-poll %.2f)\n",
		b.Name(), w.Deployment, n, ms(percentile(bySocket, 50)), ms(percentile(bySocket, 99)), ms(percentile(byPoll, 50)), ms(percentile(byPoll, 99)),
		ms(percentile(bySocket, 99))/ms(percentile(byPoll, 99)))
}

// longPoll follows a build's log through the JSON pages with wait=20, as the CLI does where no
// socket connects, handing every line's seq to got.
func longPoll(ctx context.Context, w *e2e.World, id string, got func(seq int64)) {
	cursor := ""
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, "GET", w.URL()+"/builds/"+id+"/logs?format=json&wait=20&cursor="+cursor, nil)
		req.Header.Set("Authorization", "Bearer "+w.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		var page struct {
			Items []struct {
				Seq int64 `json:"seq"`
			} `json:"items"`
			NextCursor *string `json:"nextCursor"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || page.NextCursor == nil {
			return
		}
		for _, it := range page.Items {
			got(it.Seq)
		}
		cursor = *page.NextCursor
	}
}

// BenchmarkLiveSockets: 1,000 sockets of the stock client (a Node process) on kiln serve, 100 in
// each of 10 running builds whose logs grow by 10 lines a second each, for 10 s (10,000 events a
// second to deliver). It reports the
// service's resident memory per socket (its process's RSS with the sockets, less before them)
// and the lines delivered. Target: < 64 KiB per socket.
func BenchmarkLiveSockets(b *testing.B) {
	const sockets, buildsN, perSecond, run = 1000, 10, 10, 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := e2e.NewWorld(b, e2e.Serve)
	pid := w.AddShooter(b)
	sid := w.AddSetting(b, pid, map[string]any{})["id"].(string)
	var ids []*kiln.Build
	for range buildsN {
		ids = append(ids, runningBuild(b, w.Service.Store(), w.OrgID, pid, sid))
	}
	c := e2e.NewLiveClient(b)
	before := residentKiB(b)
	for i := range sockets {
		name := fmt.Sprint("s", i)
		c.Connect(name, w.URL(), w.Token, map[string]any{"quiet": true})
		c.Do(map[string]any{"op": "join", "name": name, "buildId": ids[i%buildsN].ID, "ack": true})
	}
	c.Wait(2*time.Minute, sockets, "every join's ack", func(e e2e.LiveEvent) bool { return e.Ev == "ack" })
	b.ResetTimer()
	var wg sync.WaitGroup
	var appended atomic.Int64
	logs := w.Service.LogWriter()
	for _, bd := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(time.Second / perSecond)
			defer t.Stop()
			end := time.Now().Add(run)
			for seq := int64(1); time.Now().Before(end); seq++ {
				<-t.C
				if logs.Append(ctx, bd.OrganizationID, bd.ID, seq, kiln.LogLine{Time: time.Now(), Level: kiln.LevelInfo, Message: "streaming line " + strconv.FormatInt(seq, 10)}) == nil {
					appended.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	during := residentKiB(b)
	written := int(appended.Load()) * (sockets / buildsN)
	total := 0
	for i := 1; i <= 20 && total < written; i++ { // the last lines may still be on their way
		time.Sleep(500 * time.Millisecond)
		c.Do(map[string]any{"op": "counts"})
		counts := c.Wait(30*time.Second, i, "counts", func(e e2e.LiveEvent) bool { return e.Ev == "counts" })[i-1]
		var heard map[string]int
		_ = json.Unmarshal(counts.Data, &heard)
		total = 0
		for _, n := range heard {
			total += n
		}
	}
	b.StopTimer()
	dropped := len(c.Events(func(e e2e.LiveEvent) bool { return e.Ev == "disconnect" }))
	perSocket := float64(during-before) / sockets
	b.ReportMetric(perSocket, "KiB/socket")
	b.ReportMetric(float64(total)/run.Seconds(), "lines-delivered/s")
	fmt.Fprintf(os.Stderr, "%s: %d sockets in %d builds: service RSS %d KiB before, %d KiB with them: %.1f KiB per socket (goal < 64); %d of %d lines delivered (%.1f%%), %d sockets dropped\n",
		b.Name(), sockets, buildsN, before, during, perSocket, total, written, 100*float64(total)/float64(written), dropped)
}

// residentKiB is this process's resident memory (VmRSS), after a collection.
func residentKiB(b *testing.B) int64 {
	runtimeGC()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status here")
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

func runtimeGC() { runtime.GC(); debug.FreeOSMemory() }
