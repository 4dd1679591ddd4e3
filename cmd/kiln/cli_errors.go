package main

import (
	"errors"

	"github.com/kilnbuild/kiln/shared/client"
)

// serviceHint is advice for an error that means the service's address is wrong or the service is
// down, or "".
func serviceHint(err error) string {
	var ue *client.UnreachableError
	var na *client.NotAPIError
	switch {
	case errors.As(err, &ue):
		switch ue.Reason {
		case client.ReasonRefused:
			return " (is the service running? is KILN_URL right?)"
		case client.ReasonDNS:
			return " (is the host name in KILN_URL right?)"
		case client.ReasonTimeout:
			return " (is the service running and reachable from this network? is KILN_URL right?)"
		}
		return " (is KILN_URL right?)"
	case errors.As(err, &na) && !na.WebPage: // a web page's error says what to use instead
		return "; check KILN_URL: it should be the kiln service's base URL"
	}
	return ""
}
