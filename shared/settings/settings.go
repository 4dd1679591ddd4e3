// Package settings is the registry of kiln's KILN_* settings: every environment variable any kiln
// program reads is one row here (name, default, meaning, kind of value and the programs that read
// it), and every program reads it through its row: a typed Setting's Read, or a Row's Get or Name.
// Settings more than one deployment parses (kiln serve and the AWS functions) carry their parser
// (Setting[T]): the same name, default, validation and error text everywhere. Settings of one
// program only are Rows; that program parses them (KindOwn, or a kind whose parser lives with
// it, such as the sandbox's). The rows are grouped by program in files of their own (serve.go,
// lambdas.go, agent.go, awslocal.go, cli.go); testonly.go lists the variables only tests read.
//
// A test (scan_test.go) parses every Go file of the module and fails on an os.Getenv of a KILN_
// name outside this package, a getenv call given a KILN_ literal, and a KILN_ name in a string
// literal that is not a row here.
//
// The package links no one-machine parts (no SQLite, agent or sandbox): the Lambdas import it.
package settings

import (
	"fmt"
	"strings"
)

// Readers are the programs that read a setting: kiln serve, the AWS functions (each of which
// loads its configuration with awsapp.LoadAWSConfig (api, task, ended) or
// awsapp.LoadBackgroundConfig (schedule, deliver, which read the former's settings too); admin
// reads its table only; live serves the WebSocket API), kiln agent, kiln aws-local, the CLI, and the processes kiln starts
// itself (Child: variables kiln sets for a program of its own).
type Readers uint16

const (
	Serve    Readers = 1 << iota // kiln serve (kiln aws-local loads the same configuration)
	API                          // functions/api
	Task                         // functions/task
	Ended                        // functions/ended
	Schedule                     // functions/schedule
	Deliver                      // functions/deliver
	Admin                        // functions/admin
	Live                         // functions/live (the WebSocket API's routes)
	Agent                        // kiln agent and kiln agent run (the build hosts)
	AWSLocal                     // kiln aws-local's own settings (beyond kiln serve's)
	CLI                          // kiln's client commands (login, builds, ...) and kiln admin
	Child                        // a process kiln starts itself, told by kiln (not an operator setting)
	Test                         // tests and benchmarks only (testonly.go)

	// Lambdas are the functions that load LoadAWSConfig's settings: all of them but admin.
	Lambdas = API | Task | Ended | Schedule | Deliver
	// Background are the functions that load LoadBackgroundConfig's settings too.
	Background = Schedule | Deliver
	// Functions are every AWS function: what the CDK stack may set in a function's environment.
	Functions = Lambdas | Admin | Live
)

var readerNames = []struct {
	r    Readers
	name string
}{
	{Serve, "serve"}, {API, "api"}, {Task, "task"}, {Ended, "ended"}, {Schedule, "schedule"}, {Deliver, "deliver"},
	{Admin, "admin"}, {Live, "live"}, {Agent, "agent"}, {AWSLocal, "aws-local"}, {CLI, "cli"}, {Child, "child"}, {Test, "test"},
}

// String is the programs, comma-separated: "serve,api,task,ended,schedule,deliver".
func (r Readers) String() string {
	var names []string
	for _, n := range readerNames {
		if r&n.r != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// Kind names how a setting's value is read: one parser per kind (parse.go).
type Kind string

const (
	KindText          Kind = "text"           // any string
	KindCount         Kind = "count"          // a whole number, 1 or more (ParseCount)
	KindRate          Kind = "rate"           // requests per second, 0 or more (ParseRate)
	KindDuration      Kind = "duration"       // a positive Go duration, 2s or 4h (ParseDuration)
	KindDays          Kind = "days"           // a positive duration, also in days: 30d or 72h (ParseDays)
	KindPublicURL     Kind = "public-url"     // an absolute http(s) URL without query (ParsePublicURL)
	KindHTTPBase      Kind = "http-base"      // an absolute http(s) base URL, ending in / (ParseHTTPBase)
	KindSMTPURL       Kind = "smtp-url"       // smtp:// or smtps://, or empty (ParseSMTPURL)
	KindCIDRs         Kind = "cidr-ranges"    // comma-separated CIDR ranges (outbound.ParseAllow)
	KindPlansFile     Kind = "plans-file"     // a JSON file of the plans' limits (ParsePlans)
	KindAppID         Kind = "app-id"         // a GitHub App's numeric id, or empty (ParseAppID)
	KindArtifactStore Kind = "artifact-store" // file or s3://bucket[/prefix] (ParseArtifactStore)
	KindSize          Kind = "size"           // a positive size in bytes: 50GiB, 500MiB or 1048576 (ParseSize)
	KindSignUp        Kind = "sign-up"        // github or off (ParseSignUp)
	KindOwn           Kind = "own"            // parsed by the one program that reads it
	KindFlag          Kind = "flag"           // 1 turns it on (strconv.ParseBool where it is parsed)
	KindPath          Kind = "path"           // a file or directory, or a command's name
	KindList          Kind = "list"           // comma-separated
)

// Row is one setting: its environment variable, its default (applied when the variable is
// unset or empty), what it means, how its value is read and which deployments read it.
type Row struct {
	Name    string
	Default string
	Help    string
	Kind    Kind
	ReadBy  Readers
}

// Setting is a row with its parser: the value as the deployments use it.
type Setting[T any] struct {
	Row
	parse func(string) (T, error)
}

// Parse reads v (already defaulted by the caller); the error does not name the setting.
func (s Setting[T]) Parse(v string) (T, error) { return s.parse(v) }

// Read reads the setting from the environment, its default when unset or empty; the error
// names the setting.
func (s Setting[T]) Read(getenv func(string) string) (T, error) {
	v := getenv(s.Name)
	if v == "" {
		v = s.Default
	}
	t, err := s.parse(v)
	if err != nil {
		return t, fmt.Errorf("%s: %w", s.Name, err)
	}
	return t, nil
}

// Get is the row's value from the environment: the variable's value, or the row's default when
// it is unset or empty.
func (r Row) Get(getenv func(string) string) string {
	if v := getenv(r.Name); v != "" {
		return v
	}
	return r.Default
}

// Lookup is the row of the setting named name: one of Table's, or of TestOnly's.
func Lookup(name string) (Row, bool) {
	for _, rows := range [][]Row{Table, TestOnly} {
		for _, r := range rows {
			if r.Name == name {
				return r, true
			}
		}
	}
	return Row{}, false
}
