package delivery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"os"
	"syscall"

	"github.com/kilnbuild/kiln/shared/outbound"
)

// Cause names precisely why an attempt got no answer, for the operator's log: "dns: ...",
// "refused: ...", "timeout: ...", "tls: ...", "not allowed: ...", "reset: ...", else "network: ...".
// The URL is left out (it may carry a customer's token in its query).
func Cause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var (
		blocked  *outbound.BlockedError
		dnsErr   *net.DNSError
		certErr  *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invalid  x509.CertificateInvalidError
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		netErr   net.Error
	)
	switch {
	case errors.As(err, &blocked):
		return "not allowed: " + blocked.Error() + " (KILN_OUTBOUND_ALLOW)"
	case errors.As(err, &dnsErr):
		return "dns: " + dnsErr.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused: " + err.Error()
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &hostErr), errors.As(err, &invalid),
		errors.As(err, &recErr), errors.As(err, &alertErr):
		return "tls: " + err.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout: " + err.Error()
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset: " + err.Error()
	default:
		return "network: " + err.Error()
	}
}
