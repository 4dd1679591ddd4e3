// Package imds stands in for the EC2 instance metadata service of kiln's hosted EC2 hosts (Windows and Linux),
// for kiln aws-local and tests: IMDSv2 only (a session token from PUT /latest/api/token, then
// GETs carrying it), serving an instance identity document and its RSA-SHA256 signature made
// with a key generated at start. The service trusts the Signer's certificate in place of AWS's.
package imds

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Signer signs identity documents, as AWS does for a region.
type Signer struct {
	key *rsa.PrivateKey
	// CertificatePEM is the certificate of the signing key, for the service to trust.
	CertificatePEM string
}

// NewSigner generates a key and a self-signed certificate for it.
func NewSigner() (*Signer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate the identity signing key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{Organization: []string{"kiln aws-local"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("make the identity certificate: %w", err)
	}
	return &Signer{key: key, CertificatePEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}, nil
}

// Sign returns the base64 RSA-SHA256 (PKCS #1 v1.5) signature of document.
func (s *Signer) Sign(document []byte) string {
	sum := sha256.Sum256(document)
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	if err != nil {
		panic(fmt.Sprintf("imds: sign: %v", err)) // only on a broken key, made here
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// Document is an instance identity document as EC2 writes it (the fields kiln reads, and a
// few more).
type Document struct {
	AccountID        string    `json:"accountId"`
	Architecture     string    `json:"architecture"`
	AvailabilityZone string    `json:"availabilityZone"`
	ImageID          string    `json:"imageId"`
	InstanceID       string    `json:"instanceId"`
	InstanceType     string    `json:"instanceType"`
	PendingTime      time.Time `json:"pendingTime"`
	Region           string    `json:"region"`
	Version          string    `json:"version"`
}

// Instance is one instance's metadata service.
type Instance struct {
	Signer   *Signer
	Document Document
	// State is what autoscaling/target-lifecycle-state answers ("" : InService).
	State string

	token string
}

// NewInstance makes the metadata service of an instance of account in region.
func NewInstance(s *Signer, accountID, region, instanceID string) *Instance {
	return &Instance{Signer: s, token: kiln.NewID() + kiln.NewID(), Document: Document{
		AccountID: accountID, Architecture: "x86_64", AvailabilityZone: region + "a", ImageID: "ami-0123456789abcdef0",
		InstanceID: instanceID, InstanceType: "c6i.8xlarge", PendingTime: time.Now().UTC().Truncate(time.Second), Region: region, Version: "2017-09-30",
	}}
}

// ServeHTTP answers IMDSv2: PUT /latest/api/token with a TTL header, then GETs with the token.
func (in *Instance) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/latest/api/token" {
		if r.Method != http.MethodPut || r.Header.Get("X-aws-ec2-metadata-token-ttl-seconds") == "" {
			http.Error(w, "a PUT with X-aws-ec2-metadata-token-ttl-seconds", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(in.token))
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-aws-ec2-metadata-token")), []byte(in.token)) != 1 {
		http.Error(w, "unauthorized: IMDSv2 only", http.StatusUnauthorized) // as EC2 with HttpTokens required
		return
	}
	doc, err := json.MarshalIndent(in.Document, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	switch r.URL.Path {
	case "/latest/dynamic/instance-identity/document":
		_, _ = w.Write(doc)
	case "/latest/dynamic/instance-identity/signature":
		_, _ = w.Write([]byte(in.Signer.Sign(doc)))
	case "/latest/meta-data/autoscaling/target-lifecycle-state":
		state := in.State
		if state == "" {
			state = "InService"
		}
		_, _ = w.Write([]byte(state))
	default:
		http.NotFound(w, r)
	}
}
