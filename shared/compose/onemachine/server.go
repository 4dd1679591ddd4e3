package onemachine

import "time"

// MasterKeyFile is where, under a data directory, the master key is kept.
const MasterKeyFile = "keys/master.key"

// The API server's read timeouts, so that a client cannot hold a connection by sending slowly:
// headers within ReadHeaderTimeout, the whole request (a 25 MiB GitHub webhook body included)
// within ReadTimeout, and an idle keep-alive connection is closed after IdleTimeout. Responses
// are not limited (log follow streams for as long as the build runs).
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = time.Minute
	IdleTimeout       = 2 * time.Minute
)

// ShutdownGrace bounds a service's shutdown.
const ShutdownGrace = 20 * time.Second
