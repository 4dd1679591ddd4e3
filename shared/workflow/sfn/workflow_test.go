package sfn

import "testing"

func TestExecutionARN(t *testing.T) {
	tests := []struct{ machine, want string }{
		{"arn:aws:states:eu-west-1:123456789012:stateMachine:kiln-builds", "arn:aws:states:eu-west-1:123456789012:execution:kiln-builds:b1"},
		{"arn:aws:lambda:eu-west-1:123456789012:function:kiln", ""},
		{"kiln-builds", ""},
	}
	for _, tt := range tests {
		got, err := ExecutionARN(tt.machine, "b1")
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("ExecutionARN(%q) = %q, %v; want %q", tt.machine, got, err, tt.want)
		}
	}
}
