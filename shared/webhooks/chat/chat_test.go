package chat

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// builds are the builds the golden messages describe.
func builds() map[string]struct {
	event kiln.WebhookEvent
	build *kiln.Build
	proj  *kiln.Project
	url   string
} {
	start := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	end := start.Add(12*time.Minute + 34*time.Second)
	failed := &kiln.Build{ID: "01HZX3J1W6Q8R5T7V9B2D4F6H8", Number: 42, OrganizationID: "org", ProjectID: "01HZX3J1W6Q8R5T7V9B2D4F6P0",
		Status: kiln.StatusFailed, Platform: kiln.Platform("Win64"), BuildType: kiln.BuildType("shipping"), Branch: "release/1.2",
		Commit: "0123456789abcdef0123456789abcdef01234567", StartedAt: &start, FinishedAt: &end,
		FailureReason: "cook failed: <Shooter> & @everyone: asset Map_01 is missing"}
	complete := *failed
	complete.Status, complete.FailureReason, complete.Number = kiln.StatusComplete, "", 43
	perforce := complete
	perforce.Number, perforce.Branch, perforce.Commit, perforce.Changelist, perforce.StartedAt = 0, "//Shooter/main", "", "1234", nil
	shooter := &kiln.Project{Name: "Shooter"}
	// hostile is a failed build whose tenant-made values try to format, link, mention and quote.
	hostile := *failed
	hostile.Branch = "<!channel> <https://evil.example|click> **bold** `main`"
	hostile.FailureReason = strings.Join(hostileValues, "\n")
	return map[string]struct {
		event kiln.WebhookEvent
		build *kiln.Build
		proj  *kiln.Project
		url   string
	}{
		"failed":      {kiln.EventBuildFailed, failed, shooter, "https://kiln.example.com/"},
		"fixed":       {kiln.EventBuildFixed, &complete, shooter, "https://kiln.example.com"},
		"complete":    {kiln.EventBuildComplete, &perforce, nil, ""},
		"masked_link": {kiln.EventBuildFailed, failed, &kiln.Project{Name: maskedLink}, "https://kiln.example.com"},
		"hostile":     {kiln.EventBuildFailed, &hostile, &kiln.Project{Name: "# **Shooter** @everyone <@123>"}, "https://kiln.example.com"},
	}
}

// TestGolden compares each service's message of each build with testdata/<service>_<case>.golden;
// go test -update rewrites them.
func TestGolden(t *testing.T) {
	for name, c := range builds() {
		m := New(c.event, c.build, c.proj, c.url)
		for service, render := range map[string]func(Message) ([]byte, error){"slack": Slack, "discord": Discord} {
			t.Run(service+"_"+name, func(t *testing.T) {
				body, err := render(m)
				if err != nil {
					t.Fatal(err)
				}
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, body, "", "  "); err != nil {
					t.Fatalf("not JSON: %v", err)
				}
				pretty.WriteByte('\n')
				path := filepath.Join("testdata", service+"_"+name+".golden")
				if *update {
					if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to write it)", err)
				}
				if pretty.String() != string(want) {
					t.Errorf("%s differs:\n%s", path, pretty.String())
				}
			})
		}
	}
}

// TestShapes checks what each service documents, whatever the golden files say: Slack needs a
// text; Discord a content of at most 2000 characters, embeds, and no mentions parsed.
func TestShapes(t *testing.T) {
	for name, c := range builds() {
		m := New(c.event, c.build, c.proj, c.url)
		m.Reason = strings.Repeat("é", 3000)
		body, err := Slack(m)
		if err != nil {
			t.Fatal(err)
		}
		var slack struct {
			Text   string           `json:"text"`
			Blocks []map[string]any `json:"blocks"`
		}
		if err := json.Unmarshal(body, &slack); err != nil || slack.Text == "" || len(slack.Blocks) == 0 {
			t.Errorf("%s: slack message %s: text %q, %d blocks, %v", name, body, slack.Text, len(slack.Blocks), err)
		}
		body, err = Discord(m)
		if err != nil {
			t.Fatal(err)
		}
		var discord struct {
			Content         string           `json:"content"`
			Embeds          []map[string]any `json:"embeds"`
			AllowedMentions *struct {
				Parse []string `json:"parse"`
			} `json:"allowed_mentions"`
		}
		if err := json.Unmarshal(body, &discord); err != nil || discord.Content == "" || len([]rune(discord.Content)) > 2000 || len(discord.Embeds) != 1 {
			t.Errorf("%s: discord message %s: %v", name, body, err)
		}
		if discord.AllowedMentions == nil || discord.AllowedMentions.Parse == nil || len(discord.AllowedMentions.Parse) != 0 {
			t.Errorf("%s: discord allowed_mentions %s, want {\"parse\": []}", name, body)
		}
		if d, _ := discord.Embeds[0]["description"].(string); len([]rune(d)) > 1024 || !strings.HasSuffix(d, "…") {
			t.Errorf("%s: discord description of %d characters, want at most 1024 ending in …", name, len([]rune(d)))
		}
	}
}

func TestCheckURL(t *testing.T) {
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cases := []struct {
		format kiln.WebhookFormat
		url    string
		ok     bool
	}{
		{kiln.FormatSlack, "https://hooks.slack.com/services/T000/B000/XXXX", true},
		{kiln.FormatSlack, "https://hooks.slack.com/workflows/T000/A000/1/abc", true},
		{kiln.FormatSlack, "http://hooks.slack.com/services/T000/B000/XXXX", false},
		{kiln.FormatSlack, "https://hooks.slack.com:8443/services/T000/B000/XXXX", false},
		{kiln.FormatSlack, "https://hooks.slack.com/services/", false},
		{kiln.FormatSlack, "https://evil.example.com/services/T000/B000/XXXX", false},
		{kiln.FormatSlack, "https://hooks.slack.com.evil.example.com/services/T/B/X", false},
		{kiln.FormatSlack, "https://user:pw@hooks.slack.com/services/T/B/X", false},
		{kiln.FormatSlack, "https://discord.com/api/webhooks/1/abc", false},
		{kiln.FormatDiscord, "https://discord.com/api/webhooks/123/abc", true},
		{kiln.FormatDiscord, "https://discordapp.com/api/webhooks/123/abc", true},
		{kiln.FormatDiscord, "https://discord.com/channels/123", false},
		{kiln.FormatDiscord, "hooks.slack.com/services/T/B/X", false},
		{kiln.FormatDiscord, "http://127.0.0.1:8080/any/path", true},
		{kiln.FormatSlack, "http://127.0.0.1:8080/", true},
		{kiln.FormatSlack, "http://10.0.0.1/services/T/B/X", false},
		{kiln.FormatSlack, "http://localhost/services/T/B/X", false},
		{kiln.FormatKiln, "https://hooks.slack.com/services/T/B/X", false},
		{kiln.FormatSlack, "https://hooks.slack.com/services/" + strings.Repeat("x", 2048), false},
	}
	for _, c := range cases {
		err := CheckURL(c.format, c.url, allow)
		if (err == nil) != c.ok {
			t.Errorf("CheckURL(%s, %q) = %v, want ok %v", c.format, c.url, err, c.ok)
		}
		if err != nil && strings.Contains(err.Error(), "XXXX") {
			t.Errorf("CheckURL's error quotes the URL: %v", err)
		}
	}
}

func TestMask(t *testing.T) {
	cases := map[string]string{
		"https://hooks.slack.com/services/T000/B000/abcdEFGH": "https://hooks.slack.com/…EFGH",
		"https://discord.com/api/webhooks/123/tok-en_Z":       "https://discord.com/…en_Z",
		"http://127.0.0.1:9/x":                                "http://127.0.0.1:9/…",
		"::":                                                  "…",
	}
	for in, want := range cases {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}
