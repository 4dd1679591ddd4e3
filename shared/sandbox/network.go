package sandbox

import "fmt"

// Network is the network a sandboxed step gets (KILN_SANDBOX_NETWORK).
type Network string

const (
	// NetworkNone is an empty network namespace with only the step's own loopback: the step
	// reaches nothing outside, not kiln's API, not services listening on the host's loopback, not
	// a cloud's metadata service. The zero value means it too.
	NetworkNone Network = "none"
	// NetworkHost is the host's own network: the step reaches whatever the host reaches,
	// including kiln's API and other services on the host's loopback and the private network,
	// and on a cloud VM the metadata service (169.254.169.254) with the VM's credentials.
	NetworkHost Network = "host"
)

// ParseNetwork reads KILN_SANDBOX_NETWORK: none or host; off and on are the older spellings of
// none and host. "public" (the public internet only) is refused with the reason.
func ParseNetwork(v string) (Network, error) {
	switch v {
	case "none", "off", "":
		return NetworkNone, nil
	case "host", "on":
		return NetworkHost, nil
	case "public":
		return "", fmt.Errorf("public (the public internet without loopback, private and link-local addresses) is not offered: " +
			"it needs a user-mode network stack (pasta or slirp4netns) with address filtering that kiln does not set up; " +
			"use none, or host if builds must download (they then also reach the host's loopback, private network and metadata service)")
	}
	return "", fmt.Errorf("%q is not a sandbox network: use none (the default: no network) or host (the host's network)", v)
}

func (n Network) check() error {
	if n != "" && n != NetworkNone && n != NetworkHost {
		return fmt.Errorf("sandbox: network %q: want %q or %q", string(n), NetworkNone, NetworkHost)
	}
	return nil
}

func (n Network) isolated() bool { return n != NetworkHost }
