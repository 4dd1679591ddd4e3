package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

type sample struct {
	Name  Optional[string] `json:"name"`
	Count *int             `json:"count"`
	Inner Optional[struct {
		Flag bool `json:"flag"`
	}] `json:"inner"`
}

func TestDecodeBody(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		empty bool
		code  string // "" means it decodes
		field string
	}{
		{"object", `{"name":"x","count":2}`, false, "", ""},
		{"empty allowed", ``, true, "", ""},
		{"empty refused", ``, false, kiln.EBadRequest, ""},
		{"not json", `{"name":`, false, kiln.EBadRequest, ""},
		{"array", `[1]`, false, kiln.EBadRequest, ""},
		{"string", `"x"`, false, kiln.EBadRequest, ""},
		{"trailing", `{} {}`, false, kiln.EBadRequest, ""},
		{"wrong type", `{"count":"2"}`, false, kiln.EBadRequest, "count"},
		{"wrong type in optional", `{"name":2}`, false, kiln.EBadRequest, "name"},
		{"unknown", `{"nmae":"x"}`, false, kiln.EValidation, "nmae"},
		{"unknown nested", `{"inner":{"flag":true,"extra":1}}`, false, kiln.EValidation, "extra"},
		{"too large", `{"name":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, false, kiln.EPayloadTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			var dst sample
			err := decodeBody(httptest.NewRecorder(), r, &dst, tt.empty)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			e, ok := err.(*kiln.Error)
			if !ok || e.Code != tt.code {
				t.Fatalf("got %#v, want %s", err, tt.code)
			}
			if tt.field != "" && e.Fields[tt.field] == "" {
				t.Fatalf("fields %v do not name %s", e.Fields, tt.field)
			}
		})
	}
}

func TestOptionalTellsAbsentFromNull(t *testing.T) {
	for body, want := range map[string][2]bool{`{}`: {false, false}, `{"name":null}`: {true, true}, `{"name":"a"}`: {true, false}} {
		var s sample
		if err := decodeStrict([]byte(body), &s); err != nil {
			t.Fatal(err)
		}
		if s.Name.Set != want[0] || s.Name.Null != want[1] {
			t.Errorf("%s: Set=%v Null=%v, want %v", body, s.Name.Set, s.Name.Null, want)
		}
	}
}
