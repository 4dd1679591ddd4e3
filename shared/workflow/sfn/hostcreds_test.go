package sfn

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// TestDefinitionPassesNoCredentialInPlaintext: RunOnCodeBuild passes the host credential as a
// PARAMETER_STORE variable naming the claim's parameter, and passes no task token and no other
// value of the claim that could be the credential as PLAINTEXT.
func TestDefinitionPassesNoCredentialInPlaintext(t *testing.T) {
	var def struct {
		States map[string]struct {
			Parameters struct {
				EnvironmentVariablesOverride []map[string]string
			}
		}
	}
	if err := json.Unmarshal([]byte(Definition()), &def); err != nil {
		t.Fatal(err)
	}
	env := def.States[StateStartHost].Parameters.EnvironmentVariablesOverride
	if len(env) == 0 {
		t.Fatalf("%s passes no environment", StateStartHost)
	}
	found := false
	for _, v := range env {
		switch {
		case v["Name"] == agentapi.EnvHostCredential:
			found = true
			if v["Type"] != "PARAMETER_STORE" || v["Value.$"] != "$.host.credentialParameter" {
				t.Errorf("%s is passed as %v, want PARAMETER_STORE of $.host.credentialParameter", v["Name"], v)
			}
		case v["Name"] == agentapi.EnvTaskToken || v["Value.$"] == "$$.Task.Token":
			t.Errorf("the host gets the task token in plain text: %v", v)
		case v["Type"] != "PLAINTEXT" || !strings.HasPrefix(v["Value.$"], "$.host.") || strings.Contains(strings.ToLower(v["Value.$"]), "credential"):
			t.Errorf("unexpected variable %v", v)
		}
	}
	if !found {
		t.Errorf("%s does not pass %s", StateStartHost, agentapi.EnvHostCredential)
	}
}

// memParams is a HostCredentials in memory.
type memParams struct {
	mu     sync.Mutex
	values map[string]string
	err    error // every call fails with it
}

func (m *memParams) Put(_ context.Context, name, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.values[name] = value
	return nil
}

func (m *memParams) Delete(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	delete(m.values, name)
	return nil
}

// TestClaimAnswersTheCredentialsParameterNotTheCredential: the claim of a CodeBuild build stores
// a credential matching the build's hash under <path>/<build id>/<key> and answers that name, never the
// credential; Finish deletes the parameter. Without a parameter store, or with one failing, the
// claim fails and the build stays pending, unclaimed.
func TestClaimAnswersTheCredentialsParameterNotTheCredential(t *testing.T) {
	for _, tt := range []struct {
		name   string
		params *memParams
		path   string
	}{
		{"Stored", &memParams{values: map[string]string{}}, "/Kiln/hosts"},
		{"NoStore", nil, ""},
		{"StoreFails", &memParams{values: map[string]string{}, err: errors.New("AccessDeniedException")}, "/Kiln/hosts"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := storefixture.SQLite(t)
			now := time.Now().UTC().Truncate(time.Millisecond)
			org, _ := storefixture.Org(t, st, "", now)
			b := storefixture.Build(t, st, org.ID, kiln.StatusPending, now)
			tasks := &Tasks{Store: st, Lifecycle: &builds.Lifecycle{Builds: st, Projects: st, Artifacts: st}, Images: map[string]string{"5.3": "kiln-engine:5.3"},
				HostURL: "https://kiln.example", TimeLimit: time.Hour, Credentials: HostCredentialStore{Path: tt.path}}
			if tt.params != nil {
				tasks.Credentials.Params = tt.params
			}
			in := TaskInput{Task: TaskClaim, OrganizationID: b.OrganizationID, BuildID: b.ID, Execution: b.ID}
			out, err := tasks.Handle(ctx, in)
			got, gerr := st.GetBuild(ctx, b.OrganizationID, b.ID)
			if gerr != nil {
				t.Fatal(gerr)
			}
			if tt.params == nil || tt.params.err != nil {
				if err == nil || got.Status != kiln.StatusPending || got.HostCredentialHash != "" {
					t.Fatalf("claim without a working parameter store: %v, build %s with hash %q; want an error and the build pending", err, got.Status, got.HostCredentialHash)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := json.Marshal(out)
			want := tasks.Credentials.Name(b.ID, got.HostCredentialHash)
			stored := tt.params.values[want]
			if !strings.HasPrefix(want, "/Kiln/hosts/"+b.ID+"/") || len(want) != len("/Kiln/hosts/"+b.ID+"/")+32 {
				t.Errorf("parameter name %q, want /Kiln/hosts/<build id>/<32 hex digits>", want)
			}
			if out.CredentialParameter != want || !hostcred.Matches(stored, got.HostCredentialHash) {
				t.Fatalf("claim answered %s; parameters %v; want the parameter %s holding the build's credential", answer, tt.params.values, want)
			}
			if strings.Contains(string(answer), stored) || strings.Contains(string(answer), "kbh.") {
				t.Fatalf("the claim's answer (the execution's data) holds the credential: %s", answer)
			}
			if _, err := tasks.Handle(ctx, TaskInput{Task: TaskFinish, OrganizationID: b.OrganizationID, BuildID: b.ID, Execution: b.ID}); err != nil {
				t.Fatal(err)
			}
			if len(tt.params.values) != 0 {
				t.Errorf("after Finish the parameters are %v, want none", tt.params.values)
			}
		})
	}
}
