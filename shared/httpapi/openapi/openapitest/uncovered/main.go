// Command uncovered fails when some operation of kiln's OpenAPI document was exercised by none
// of the end-to-end test packages: each writes what it exercised into the directory given as
// the argument (make test passes it to them), and the operations are judged as one.
package main

import (
	"fmt"
	"os"

	"github.com/kilnbuild/kiln/shared/httpapi/openapi/openapitest"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: uncovered DIR")
		os.Exit(2)
	}
	missing, err := openapitest.UncoveredIn(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapi coverage:", err)
		os.Exit(1)
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: operations no end-to-end test exercised: %v\n", missing)
		os.Exit(1)
	}
	fmt.Println("openapi coverage: every operation was exercised by an end-to-end test")
}
