package settings

// The client commands' settings (kiln login, builds, artifacts, ...; cmd/kiln/cli_*.go). kiln
// admin reads KILN_DATA as kiln serve does (serve.go).
var (
	URL   = Row{"KILN_URL", "", "the service's address, e.g. https://kiln.example.com (overrides kiln login's)", KindText, CLI}
	Token = Row{"KILN_TOKEN", "", "an API token (overrides kiln login's; prefer it to a flag)", KindText, CLI}
)

var cliRows = []Row{URL, Token}
