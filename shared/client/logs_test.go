package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestLogsFollowWaitsOutPassingFailures: following a log goes on after 503s, a 429 and a dropped
// connection, from the same cursor, so every line comes once; a 404 ends it at once, and so does
// any failure without follow.
func TestLogsFollowWaitsOutPassingFailures(t *testing.T) {
	var mu sync.Mutex
	var failures []int // answers to give the request with cursor c1 before the page; 0 drops the connection
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/builds/gone/logs" {
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":"not_found","message":"build not found","requestId":"req_9"}`)
			return
		}
		switch r.URL.Query().Get("cursor") {
		case "":
			fmt.Fprint(w, `{"items":[{"seq":1,"message":"one"},{"seq":2,"message":"two"}],"nextCursor":"c1","buildStatus":"running"}`)
		case "c1":
			mu.Lock()
			var f int
			failing := len(failures) > 0
			if failing {
				f, failures = failures[0], failures[1:]
			}
			mu.Unlock()
			switch {
			case failing && f == 0:
				panic(http.ErrAbortHandler)
			case failing:
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(f)
				fmt.Fprintf(w, `{"error":"x","message":"passing","requestId":"req_1"}`)
			default:
				fmt.Fprint(w, `{"items":[{"seq":3,"message":"three"}],"nextCursor":null,"buildStatus":"complete"}`)
			}
		default:
			t.Errorf("cursor %q", r.URL.Query().Get("cursor"))
		}
	}))
	defer srv.Close()
	c, err := New(srv.URL, "kiln_t", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.retryBase = time.Millisecond

	collect := func(id string, follow bool) ([]int64, string, error) {
		var seqs []int64
		status, err := c.Logs(context.Background(), id, follow, func(l LogLine) error { seqs = append(seqs, l.Seq); return nil })
		return seqs, status, err
	}
	failures = []int{503, 0, 429, 502}
	seqs, status, err := collect("b", true)
	if err != nil || status != "complete" || fmt.Sprint(seqs) != "[1 2 3]" {
		t.Fatalf("follow: lines %v, status %q, err %v", seqs, status, err)
	}

	if _, _, err := collect("gone", true); !isStatus(err, 404) {
		t.Errorf("follow of an unknown build: %v", err)
	}
	failures = []int{503}
	if _, _, err := collect("b", false); !isStatus(err, 503) {
		t.Errorf("without follow, a 503 is an error: %v", err)
	}
	failures = make([]int, followRetries+1)
	for i := range failures {
		failures[i] = 503
	}
	if _, _, err := collect("b", true); !isStatus(err, 503) {
		t.Errorf("after %d failures in a row following gives up: %v", followRetries, err)
	}
}

func isStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}
