package awsapp

import (
	"strings"
	"testing"
	"time"
)

// TestWorkflowSettings: the workflow's settings are read and bad ones refused with the setting named.
func TestWorkflowSettings(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, c WorkflowConfig)
	}{
		{name: "none", check: func(t *testing.T, c WorkflowConfig) {
			if c.StateMachineARN != "" || len(c.HostImages) != 0 || c.BuildTimeLimit != 4*time.Hour {
				t.Errorf("got %+v", c)
			}
		}},
		{name: "all", env: map[string]string{"KILN_STATE_MACHINE_ARN": "arn:aws:states:eu-west-1:123456789012:stateMachine:kiln-builds",
			"KILN_HOST_PROJECT": "kiln-hosts", "KILN_HOST_IMAGES": `{"5.3":"repo/kiln-engine:5.3"}`, "KILN_BUILD_TIMEOUT": "90m",
			"KILN_HOST_CREDENTIAL_PATH": "/Kiln/hosts"},
			check: func(t *testing.T, c WorkflowConfig) {
				if c.HostProject != "kiln-hosts" || c.HostCredentialPath != "/Kiln/hosts" || c.HostImages["5.3"] != "repo/kiln-engine:5.3" || c.BuildTimeLimit != 90*time.Minute {
					t.Errorf("got %+v", c)
				}
			}},
		{name: "not a state machine", env: map[string]string{"KILN_STATE_MACHINE_ARN": "arn:aws:lambda:eu-west-1:1:function:x"}, wantErr: "KILN_STATE_MACHINE_ARN"},
		{name: "images not JSON", env: map[string]string{"KILN_HOST_IMAGES": "5.3=repo/x"}, wantErr: "KILN_HOST_IMAGES"},
		{name: "an empty image", env: map[string]string{"KILN_HOST_IMAGES": `{"5.3":""}`}, wantErr: "KILN_HOST_IMAGES"},
		{name: "a credential path without its leading slash", env: map[string]string{"KILN_HOST_CREDENTIAL_PATH": "Kiln/hosts"}, wantErr: "KILN_HOST_CREDENTIAL_PATH"},
		{name: "a credential path with a trailing slash", env: map[string]string{"KILN_HOST_CREDENTIAL_PATH": "/Kiln/hosts/"}, wantErr: "KILN_HOST_CREDENTIAL_PATH"},
		{name: "a bad time limit", env: map[string]string{"KILN_BUILD_TIMEOUT": "-1h"}, wantErr: "KILN_BUILD_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c WorkflowConfig
			err := c.load(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}
