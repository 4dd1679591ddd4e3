package s3artifacts

import "testing"

func TestParseURL(t *testing.T) {
	tests := []struct {
		in   string
		want Location
		ok   bool
	}{
		{"s3://kiln-artifacts", Location{Bucket: "kiln-artifacts"}, true},
		{"s3://kiln-artifacts/", Location{Bucket: "kiln-artifacts"}, true},
		{"s3://my.bucket-1/studio/builds", Location{Bucket: "my.bucket-1", Prefix: "studio/builds"}, true},
		{"s3://abc/p/", Location{Bucket: "abc", Prefix: "p"}, true},
		{"s3://ab", Location{}, false},
		{"s3://Upper", Location{}, false},
		{"s3://-bucket", Location{}, false},
		{"s3://bucket-", Location{}, false},
		{"s3://a..b", Location{}, false},
		{"s3://under_score", Location{}, false},
		{"s3://bucket/a//b", Location{}, false},
		{"s3://bucket/.hidden", Location{}, false},
		{"s3://bucket/a b", Location{}, false},
		{"s3://bucket?x=1", Location{}, false},
		{"s3://user@bucket", Location{}, false},
		{"s3://bucket:9000", Location{}, false},
		{"s3://bucket#f", Location{}, false},
		{"s3:bucket", Location{}, false},
		{"https://bucket", Location{}, false},
		{"file", Location{}, false},
		{"", Location{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseURL(tt.in)
			if tt.ok && (err != nil || got != tt.want) {
				t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			if !tt.ok && err == nil {
				t.Errorf("ParseURL(%q) = %+v, want an error", tt.in, got)
			}
		})
	}
}

func TestPartSizeFor(t *testing.T) {
	for _, tt := range []struct{ max, want int64 }{
		{0, DefaultPartSize},
		{50 << 30, DefaultPartSize},                   // 50 GiB fits 10,000 parts of 16 MiB
		{200 << 30, 21 << 20},                         // 200 GiB needs 20.48 MiB parts, rounded up to whole MiB
		{1 << 40, ((1<<40)/maxParts)>>20<<20 + 1<<20}, // 1 TiB
	} {
		got := PartSizeFor(tt.max)
		if got != tt.want || got*maxParts < tt.max {
			t.Errorf("PartSizeFor(%d) = %d, want %d", tt.max, got, tt.want)
		}
	}
}
