package stack_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/infra/stack"
	"github.com/kilnbuild/kiln/shared/awslocal/imds"
)

func TestPropsFromContext(t *testing.T) {
	signer, err := imds.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	certs := filepath.Join(t.TempDir(), "aws-identity.pem")
	if err := os.WriteFile(certs, []byte(signer.CertificatePEM), 0o600); err != nil {
		t.Fatal(err)
	}
	notCert := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notCert, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		context map[string]any
		want    stack.Props
		err     string
	}{
		{name: "none", context: map[string]any{}, want: stack.Props{}},
		{
			name: "from -c (strings)",
			context: map[string]any{
				"kiln:hostImages": `{"5.3":"ue-5.3","5.4":"ue-5.4"}`, "kiln:hostRepository": "engines",
				"kiln:artifactRetentionDays": "14", "kiln:githubAppId": "12345", "kiln:githubAppSlug": "kiln",
				"kiln:publicUrl": "https://kiln.example.com", "kiln:tracing": "true", "kiln:lambdaAssetRoot": "out/lambda",
			},
			want: stack.Props{
				HostImages: map[string]string{"5.3": "ue-5.3", "5.4": "ue-5.4"}, HostRepository: "engines",
				ArtifactRetentionDays: 14, GitHubAppID: "12345", GitHubAppSlug: "kiln",
				PublicURL: "https://kiln.example.com", Tracing: true, LambdaAssetRoot: "out/lambda",
			},
		},
		{
			name: "from cdk.json (JSON types)",
			context: map[string]any{
				"kiln:hostImages": map[string]any{"5.4": "ue-5.4"}, "kiln:artifactRetentionDays": 7.0,
				"kiln:githubAppId": 12345.0, "kiln:tracing": true,
			},
			want: stack.Props{HostImages: map[string]string{"5.4": "ue-5.4"}, ArtifactRetentionDays: 7, GitHubAppID: "12345", Tracing: true},
		},
		{
			name: "Windows hosts from -c",
			context: map[string]any{
				"kiln:windowsAmiId": "ami-0123456789abcdef0", "kiln:windowsInstanceType": "c7i.12xlarge",
				"kiln:windowsWarmPoolSize": "4", "kiln:windowsMaxHosts": "20", "kiln:windowsEgressPorts": "443, 1666",
				"kiln:ec2IdentityCertsFile": certs,
			},
			want: stack.Props{
				WindowsAMI: "ami-0123456789abcdef0", WindowsInstanceType: "c7i.12xlarge", EC2IdentityCertificates: signer.CertificatePEM,
				WindowsWarmPoolSize: 4, WindowsMaxHosts: 20, WindowsEgressPorts: []int{443, 1666},
			},
		},
		{
			name: "Windows hosts from cdk.json",
			context: map[string]any{
				"kiln:windowsAmiId": "ami-01234567", "kiln:windowsWarmPoolSize": 1.0, "kiln:windowsEgressPorts": []any{443.0},
				"kiln:ec2IdentityCertsFile": certs,
			},
			want: stack.Props{WindowsAMI: "ami-01234567", WindowsWarmPoolSize: 1, WindowsEgressPorts: []int{443}, EC2IdentityCertificates: signer.CertificatePEM},
		},
		{
			name: "Linux hosts from -c",
			context: map[string]any{
				"kiln:linuxAmiId": "ami-0fedcba9876543210", "kiln:linuxEngineVersions": "5.4, 5.5.1", "kiln:linuxInstanceType": "c7i.8xlarge",
				"kiln:linuxWarmPoolSize": "3", "kiln:linuxMaxHosts": "6", "kiln:linuxEgressPorts": "443,1666", "kiln:ec2IdentityCertsFile": certs,
			},
			want: stack.Props{
				LinuxAMI: "ami-0fedcba9876543210", LinuxEngineVersions: []string{"5.4", "5.5.1"}, LinuxInstanceType: "c7i.8xlarge",
				LinuxWarmPoolSize: 3, LinuxMaxHosts: 6, LinuxEgressPorts: []int{443, 1666}, EC2IdentityCertificates: signer.CertificatePEM,
			},
		},
		{
			name:    "Linux hosts from cdk.json",
			context: map[string]any{"kiln:linuxAmiId": "ami-01234567", "kiln:linuxEngineVersions": []any{"5.4"}, "kiln:ec2IdentityCertsFile": certs},
			want:    stack.Props{LinuxAMI: "ami-01234567", LinuxEngineVersions: []string{"5.4"}, EC2IdentityCertificates: signer.CertificatePEM},
		},
		{name: "sign-up", context: map[string]any{"kiln:githubAppId": "12", "kiln:githubClientId": "Iv1.kiln", "kiln:signup": "github"},
			want: stack.Props{GitHubAppID: "12", GitHubClientID: "Iv1.kiln", SignUp: true}},
		{name: "sign-up off", context: map[string]any{"kiln:signup": "off"}, want: stack.Props{}},
		{name: "sign-up without the OAuth client", context: map[string]any{"kiln:githubAppId": "12", "kiln:signup": "github"}, err: "kiln:signup"},
		{name: "sign-up of another kind", context: map[string]any{"kiln:signup": "open"}, err: "kiln:signup"},
		{name: "a Linux AMI without engine versions", context: map[string]any{"kiln:linuxAmiId": "ami-01234567", "kiln:ec2IdentityCertsFile": certs}, err: "kiln:linuxEngineVersions"},
		{name: "Linux engine versions without an AMI", context: map[string]any{"kiln:linuxEngineVersions": "5.4"}, err: "kiln:linuxAmiId"},
		{name: "a Linux AMI without the identity certificate", context: map[string]any{"kiln:linuxAmiId": "ami-01234567", "kiln:linuxEngineVersions": "5.4"}, err: "kiln:ec2IdentityCertsFile"},
		{name: "not a Linux engine version", context: map[string]any{"kiln:linuxAmiId": "ami-01234567", "kiln:linuxEngineVersions": "5.4,latest"}, err: `"latest"`},
		{name: "Linux engine version not a string", context: map[string]any{"kiln:linuxEngineVersions": []any{5.4}}, err: "kiln:linuxEngineVersions"},
		{name: "not a Linux AMI id", context: map[string]any{"kiln:linuxAmiId": "ubuntu"}, err: "kiln:linuxAmiId"},
		{name: "Linux pool over max", context: map[string]any{"kiln:linuxWarmPoolSize": "5", "kiln:linuxMaxHosts": "4"}, err: "kiln:linuxWarmPoolSize (5)"},
		{name: "Linux port out of range", context: map[string]any{"kiln:linuxEgressPorts": "0"}, err: "kiln:linuxEgressPorts"},
		{name: "an AMI without the identity certificate", context: map[string]any{"kiln:windowsAmiId": "ami-01234567"}, err: "kiln:ec2IdentityCertsFile"},
		{name: "an identity certificate file that is none", context: map[string]any{"kiln:windowsAmiId": "ami-01234567", "kiln:ec2IdentityCertsFile": notCert}, err: "not PEM"},
		{name: "an identity certificate file that is missing", context: map[string]any{"kiln:ec2IdentityCertsFile": notCert + ".gone"}, err: "kiln:ec2IdentityCertsFile"},
		{name: "not an AMI id", context: map[string]any{"kiln:windowsAmiId": "windows-2022"}, err: "kiln:windowsAmiId"},
		{name: "AMI id too short", context: map[string]any{"kiln:windowsAmiId": "ami-0123"}, err: "kiln:windowsAmiId"},
		{name: "not an instance type", context: map[string]any{"kiln:windowsInstanceType": "big"}, err: "kiln:windowsInstanceType"},
		{name: "warm pool zero", context: map[string]any{"kiln:windowsWarmPoolSize": "0"}, err: "kiln:windowsWarmPoolSize"},
		{name: "max hosts not a number", context: map[string]any{"kiln:windowsMaxHosts": "ten"}, err: "kiln:windowsMaxHosts"},
		{name: "pool over max", context: map[string]any{"kiln:windowsWarmPoolSize": "5", "kiln:windowsMaxHosts": "4"}, err: "is more than"},
		{name: "default pool over max", context: map[string]any{"kiln:windowsMaxHosts": "1"}, err: "kiln:windowsWarmPoolSize (2)"},
		{name: "port out of range", context: map[string]any{"kiln:windowsEgressPorts": "443,70000"}, err: `"70000"`},
		{name: "port not a number", context: map[string]any{"kiln:windowsEgressPorts": []any{"https"}}, err: "kiln:windowsEgressPorts"},
		{name: "images not JSON", context: map[string]any{"kiln:hostImages": "5.4=ue"}, err: "kiln:hostImages"},
		{name: "not an engine version", context: map[string]any{"kiln:hostImages": `{"latest":"ue"}`}, err: `"latest"`},
		{name: "not an image tag", context: map[string]any{"kiln:hostImages": `{"5.4":"ue 5.4"}`}, err: `"ue 5.4"`},
		{name: "tag not a string", context: map[string]any{"kiln:hostImages": map[string]any{"5.4": 5.4}}, err: `"5.4"`},
		{name: "retention not a number", context: map[string]any{"kiln:artifactRetentionDays": "30d"}, err: "kiln:artifactRetentionDays"},
		{name: "retention zero", context: map[string]any{"kiln:artifactRetentionDays": "0"}, err: "kiln:artifactRetentionDays"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := stack.PropsFromContext(func(key string) any { return tc.context[key] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
