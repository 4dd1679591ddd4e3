//go:build !linux

package dynamodblocal

import (
	"context"
	"errors"
	"net"
)

// netnsSupported: only Linux has network namespaces, which keep DynamoDB Local (it listens on
// every interface) out of reach of everything but this process.
const netnsSupported = false

var errNoNetns = errors.New("dynamodblocal: DynamoDB Local needs Linux here (it runs in a private network namespace, " +
	"because it cannot be told to listen on loopback only)")

// DialContext fails: see errNoNetns.
func (s *Server) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return nil, errNoNetns
}
