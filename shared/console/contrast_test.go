package console

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestLogContrast: the log's lines, by level, the log viewer's parts, and the alert banner have text readable on their
// background by WCAG AA (a contrast ratio of at least 4.5:1), as app.css declares them.
func TestLogContrast(t *testing.T) {
	css, err := os.ReadFile("static/app.css")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ text, on string }{
		{".log", ".log"},
		{".log-line.level-warn", ".log"},
		{".log-line.level-error", ".log"},
		// The log viewer: line numbers, timestamps, the highlighted line (#L<seq>), stage banners
		// with their durations and counts, and search matches.
		{".log .ln", ".log"},
		{".log .ts", ".log"},
		{".log", ".log-row.target"},
		{".log .ln", ".log-row.target"},
		{".log .ts", ".log-row.target"},
		{".log-line.level-warn", ".log-row.target"},
		{".log-line.level-error", ".log-row.target"},
		{".log-stage", ".log-stage"},
		{".log-fold", ".log-fold"},
		{".log .dur", ".log-stage"},
		{".log .n-error", ".log-stage"},
		{".log .n-warn", ".log-stage"},
		{".log .dur", ".log-row.target"},
		{".log .n-error", ".log-row.target"},
		{".log .n-warn", ".log-row.target"},
		{".log mark", ".log mark"},
		{".log mark.current", ".log mark.current"},
		{".error", ".error"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			fg, bg := declared(t, string(css), tt.text, "color"), declared(t, string(css), tt.on, "background")
			if r := contrast(fg, bg); r < 4.5 {
				t.Errorf("%s is #%s on #%s: %.2f:1, want at least 4.5:1", tt.text, fg, bg, r)
			}
		})
	}
	// The numbers themselves: the log's error lines were once drawn #ff8f8f on the banner's #fdeeee.
	if r := contrast("ff8f8f", "fdeeee"); math.Abs(r-1.94) > 0.01 {
		t.Errorf("contrast of #ff8f8f on #fdeeee = %.3f, want 1.94", r)
	}
}

// declared is the hex colour (without #) of property prop in the rule of selector sel.
func declared(t *testing.T, css, sel, prop string) string {
	t.Helper()
	rule := regexp.MustCompile(`(?m)(?:^|\})\s*` + regexp.QuoteMeta(sel) + `\s*\{([^}]*)\}`).FindStringSubmatch(css)
	if rule == nil {
		t.Fatalf("app.css has no rule %s", sel)
	}
	v := regexp.MustCompile(`(?:^|[;\s])` + prop + `:\s*#([0-9a-fA-F]{6})\b`).FindStringSubmatch(rule[1])
	if v == nil {
		t.Fatalf("the rule %s has no %s: #rrggbb", sel, prop)
	}
	return v[1]
}

// contrast is WCAG 2's contrast ratio of two colours rrggbb: (L1 + 0.05) / (L2 + 0.05), L1 the
// lighter's relative luminance.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

func luminance(hex string) float64 {
	var ch [3]float64
	for i := range ch {
		v, _ := strconv.ParseUint(hex[2*i:2*i+2], 16, 8)
		c := float64(v) / 255
		if c <= 0.03928 {
			ch[i] = c / 12.92
		} else {
			ch[i] = math.Pow((c+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*ch[0] + 0.7152*ch[1] + 0.0722*ch[2]
}
