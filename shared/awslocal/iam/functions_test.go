package iam

import (
	"reflect"
	"testing"
)

func TestFunctionConfigs(t *testing.T) {
	for _, tt := range []struct {
		name, template string
		want           map[string]FunctionConfig
		wantErr        bool
	}{
		{"memory and architecture as set", `{"Resources":{"TaskFunction1A2B3C4D":{"Type":"AWS::Lambda::Function","Properties":{"MemorySize":256,"Architectures":["arm64"]}},
			"APIFunction1A2B3C4D":{"Type":"AWS::Lambda::Function","Properties":{"MemorySize":512,"Architectures":["arm64"]}}}}`,
			map[string]FunctionConfig{"task": {256, "arm64"}, "api": {512, "arm64"}}, false},
		{"Lambda's defaults", `{"Resources":{"EndedFunction1A2B3C4D":{"Type":"AWS::Lambda::Function","Properties":{}}}}`,
			map[string]FunctionConfig{"ended": {128, "x86_64"}}, false},
		{"a memory that is not a number", `{"Resources":{"EndedFunction1A2B3C4D":{"Type":"AWS::Lambda::Function","Properties":{"MemorySize":{"Ref":"Size"}}}}}`,
			nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := ParseTemplate([]byte(tt.template), testNames)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.FunctionConfigs()
			if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, %v; want %v (error: %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
