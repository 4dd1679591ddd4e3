//go:build !windows

package sandbox

import (
	"context"
	"fmt"
	"runtime"
)

// OpenAccount fails outside Windows: there builds are confined by Bubblewrap (Linux) or not at all.
func OpenAccount(context.Context, Account) (Confiner, error) {
	return nil, fmt.Errorf("sandbox: running builds as a local account of their own (KILN_SANDBOX=account) is for Windows; this is %s", runtime.GOOS)
}
