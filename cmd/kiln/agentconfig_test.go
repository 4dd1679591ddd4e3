package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAgentReadsItsConfigFile: `kiln agent --config FILE`, with nothing in its environment (a
// Windows service the user data never restarted), takes every setting from the file: it runs as
// a hosted EC2 host and claims from the API the file names.
func TestAgentReadsItsConfigFile(t *testing.T) {
	engines := fakeEngines(t, "5.4")
	_, meta := fakeIMDS(t)
	claims := make(chan string, 10)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims <- r.URL.Path
		w.WriteHeader(http.StatusNoContent)
	}))
	defer api.Close()
	file := filepath.Join(t.TempDir(), "agent.conf")
	// As the user data writes it on Windows: CRLF line ends, a comment.
	conf := "# written by the launch template's user data\r\nKILN_AGENT_EC2=1\r\nKILN_HOST_URL=" + api.URL +
		"\r\nKILN_AGENT_IMDS=" + meta.URL + "\r\nKILN_AGENT_ENGINES=" + engines + "\r\n"
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"agent", "--config", file}, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{})
	}()
	select {
	case path := <-claims:
		if !strings.HasPrefix(path, "/agent/") && !strings.Contains(path, "claim") {
			t.Errorf("the first call was %s, want a claim", path)
		}
	case err := <-done:
		t.Fatalf("kiln agent --config ended before claiming: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no claim came")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("kiln agent --config after a stop: %v", err)
	}
}

func TestWithAgentConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.conf", "\xef\xbb\xbfKILN_HOST_URL=https://file.example\n\n# c\nKILN_AGENT_ENGINES = C:\\engines\n")
	for name, tc := range map[string]struct {
		args    []string
		env     map[string]string
		rest    []string
		want    map[string]string
		wantErr string
	}{
		"no file":            {args: []string{"--pool", "p"}, rest: []string{"--pool", "p"}, want: map[string]string{"KILN_HOST_URL": ""}},
		"flag":               {args: []string{"--config", good, "run"}, rest: []string{"run"}, want: map[string]string{"KILN_HOST_URL": "https://file.example", "KILN_AGENT_ENGINES": `C:\engines`}},
		"flag with =":        {args: []string{"--config=" + good}, rest: nil, want: map[string]string{"KILN_HOST_URL": "https://file.example"}},
		"environment names":  {env: map[string]string{agentConfigEnv: good}, want: map[string]string{"KILN_HOST_URL": "https://file.example"}},
		"environment wins":   {args: []string{"--config", good}, env: map[string]string{"KILN_HOST_URL": "https://env.example"}, want: map[string]string{"KILN_HOST_URL": "https://env.example", "KILN_AGENT_ENGINES": `C:\engines`}},
		"missing file":       {args: []string{"--config", filepath.Join(dir, "none")}, wantErr: "read the configuration file"},
		"no path":            {args: []string{"--config"}, wantErr: "needs a file"},
		"not a setting":      {args: []string{"--config", write("bad.conf", "KILN_HOST_URL=x\nsecret-token\n")}, wantErr: "line 2: want KILN_<NAME>=<value>"},
		"not kiln's":         {args: []string{"--config", write("path.conf", "PATH=C:\\evil\n")}, wantErr: "line 1"},
		"twice":              {args: []string{"--config", write("twice.conf", "KILN_HOST_URL=a\nKILN_HOST_URL=b\n")}, wantErr: "set twice"},
		"names another file": {args: []string{"--config", write("loop.conf", "KILN_AGENT_CONFIG=x\n")}, wantErr: "cannot name another file"},
		"lower-case name":    {args: []string{"--config", write("lower.conf", "KILN_host=x\n")}, wantErr: "line 1"},
	} {
		t.Run(name, func(t *testing.T) {
			rest, getenv, err := withAgentConfig(tc.args, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "secret-token") {
					t.Errorf("the error shows a line's content: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(rest, " ") != strings.Join(tc.rest, " ") {
				t.Errorf("arguments %q, want %q", rest, tc.rest)
			}
			for k, v := range tc.want {
				if got := getenv(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}
