package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// BenchmarkConsole measures the web console in headless Chromium on an organization of 1,000
// builds, with the browser cache off (every load is a first load): the bytes transferred until
// the first build list is drawn (goal < 200 KB), split into the console's own files and its API
// calls, and the time from navigation start to the drawn list (goal < 300 ms locally), beside
// the same page's API call alone (GET /builds?limit=25 from Go) measured in the same run.
func BenchmarkConsole(b *testing.B) {
	s := seedBuilds(b, 1_000)
	ctx := e2e.StartBrowser(b)
	const listed = `document.querySelectorAll('tr[data-build]').length >= 25`
	e2e.Run(b, ctx, "sign in", chromedp.Navigate(s.url+"/console/"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), s.token), chromedp.Click(chromedp.ID(`#signin`)), e2e.WaitJS(listed))

	var mu sync.Mutex
	urls := map[network.RequestID]string{}
	var static, apiBytes float64
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			urls[e.RequestID] = e.Request.URL
		case *network.EventLoadingFinished:
			if strings.Contains(urls[e.RequestID], "/console/") {
				static += e.EncodedDataLength
			} else {
				apiBytes += e.EncodedDataLength
			}
		}
	}); err != nil {
		b.Fatal(err)
	}
	e2e.Run(b, ctx, "turn the cache off", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
		return err
	}))

	var loads, firstList []float64
	b.Run("console-first-list", func(b *testing.B) {
		for b.Loop() {
			mu.Lock()
			static, apiBytes = 0, 0
			mu.Unlock()
			e2e.Run(b, ctx, "load", chromedp.Navigate(s.url+"/console/"))
			// Milliseconds since navigation start when the list is drawn (a mutation observer
			// checks after every change of the page).
			ms := e2e.Value(b, ctx, "wait for the list", chromedp.Poll[float64](listed+` && performance.now()`, chromedp.WithPollingMutation(),
				chromedp.WithPollingTimeout(20*time.Second)))
			time.Sleep(200 * time.Millisecond) // the last loadingFinished events
			mu.Lock()
			loads = append(loads, static+apiBytes)
			firstList = append(firstList, ms)
			st, ap := static, apiBytes
			mu.Unlock()
			b.ReportMetric(st/1024, "static-KB")
			b.ReportMetric(ap/1024, "api-KB")
		}
		b.ReportMetric(median(firstList), "first-list-ms")
		b.ReportMetric(median(loads)/1024, "transferred-KB")
	})

	var alone []float64
	b.Run("GET-builds-alone", func(b *testing.B) {
		client := &http.Client{}
		for b.Loop() {
			req, _ := http.NewRequest("GET", s.url+"/builds?limit=25", nil)
			req.Header.Set("Authorization", "Bearer "+s.token)
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			alone = append(alone, float64(time.Since(start).Microseconds())/1000)
		}
		b.ReportMetric(median(alone), "ms")
	})
	if len(firstList) > 0 && len(alone) > 0 {
		fmt.Printf("\nconsole on 1,000 builds, cache off: %.1f KB transferred to the first build list (goal < 200 KB); "+
			"drawn %.0f ms after navigation start (goal < 300 ms); GET /builds?limit=25 alone: %.1f ms\n",
			median(loads)/1024, median(firstList), median(alone))
	}
}
