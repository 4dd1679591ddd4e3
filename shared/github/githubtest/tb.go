package githubtest

// TB is the part of testing.TB the fake needs, so that a program (cmd/fakegithub) can run it
// outside a test too.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}
