// Package hostedhosts is kiln's own pools of EC2 build hosts (Windows and Linux), apart from the Step
// Functions wait every agent pool shares: how a host proves it is one (its instance identity
// document, signed by AWS, checked against the deployment's account and Auto Scaling groups), and
// the schedule's tick that publishes the waiting builds and terminates hosts done with.
package hostedhosts

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Identity is what a host presents on its claim: the instance identity document as IMDS serves
// it (/latest/dynamic/instance-identity/document) and its base64 RSA-SHA256 signature
// (/latest/dynamic/instance-identity/signature).
type Identity struct {
	Document  string `json:"document"`
	Signature string `json:"signature"`
}

// Document is the part of the instance identity document the service reads.
type Document struct {
	AccountID   string    `json:"accountId"`
	InstanceID  string    `json:"instanceId"`
	Region      string    `json:"region"`
	PendingTime time.Time `json:"pendingTime"`
}

// maxDocument bounds the document (AWS's are under 1 KiB).
const maxDocument = 16 << 10

// Certificates are the certificates whose keys sign instance identity documents: AWS's public
// "RSA" certificate for the deployment's region (the one for the base64-encoded signature), or
// aws-local's own.
type Certificates []*x509.Certificate

// ParseCertificates reads PEM certificates (one or more); none is an error.
func ParseCertificates(pemText string) (Certificates, error) {
	var out Certificates
	rest := []byte(strings.TrimSpace(pemText))
	for len(rest) > 0 {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("not PEM: want one or more -----BEGIN CERTIFICATE----- blocks")
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("a PEM %s block where a CERTIFICATE was expected", block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse certificate: %w", err)
		}
		if _, ok := c.PublicKey.(*rsa.PublicKey); !ok {
			return nil, errors.New("the certificate's key is not RSA: use AWS's RSA certificate for the region, not the DSA one")
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no certificate")
	}
	return out, nil
}

// ErrBadSignature refuses an identity whose signature none of the certificates verifies.
var ErrBadSignature = kiln.Errorf(kiln.EInvalidToken, "the instance identity document's signature does not verify: not a document AWS signed for this region")

// Verify checks the identity's signature (RSA PKCS #1 v1.5 over the SHA-256 of the document's
// exact bytes) with each certificate, and reads the document once one verifies. Certificates
// are AWS's long-lived signing certificates, used for their key: their validity dates are not
// checked, as AWS's own verification procedure does not.
func (cs Certificates) Verify(id Identity) (*Document, error) {
	if id.Document == "" || id.Signature == "" || len(id.Document) > maxDocument {
		return nil, kiln.Errorf(kiln.EInvalidToken, "an instance identity document and its signature are required")
	}
	sig, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(id.Signature), ""))
	if err != nil {
		return nil, kiln.Errorf(kiln.EInvalidToken, "the instance identity signature is not base64")
	}
	sum := sha256.Sum256([]byte(id.Document))
	verified := false
	for _, c := range cs {
		if key, ok := c.PublicKey.(*rsa.PublicKey); ok && rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, ErrBadSignature
	}
	var doc Document
	if err := json.Unmarshal([]byte(id.Document), &doc); err != nil || doc.AccountID == "" || doc.InstanceID == "" {
		return nil, kiln.Errorf(kiln.EInvalidToken, "the instance identity document names no account or instance")
	}
	return &doc, nil
}
