// Package settings is the one table of kiln's operator settings that more than one deployment
// reads (kiln serve and the AWS functions), with one parser per kind of value. Each deployment
// reads a shared setting through its row here: the same name, default, validation and error
// text everywhere. Settings only one deployment has are listed too, with the deployment that
// reads them; their parsing stays with that deployment.
//
// The package links no one-machine parts (no SQLite, agent or sandbox): the Lambdas import it.
package settings

import (
	"fmt"
	"strings"
)

// Readers are the deployments that read a setting: kiln serve and the AWS functions, each of
// which loads its configuration with awsapp.LoadAWSConfig (api, task, ended) or
// awsapp.LoadBackgroundConfig (schedule, deliver, which read the former's settings too).
type Readers uint8

const (
	Serve    Readers = 1 << iota // kiln serve (kiln aws-local loads the same configuration)
	API                          // functions/api
	Task                         // functions/task
	Ended                        // functions/ended
	Schedule                     // functions/schedule
	Deliver                      // functions/deliver

	// Lambdas are the functions that load LoadAWSConfig's settings: all of them.
	Lambdas = API | Task | Ended | Schedule | Deliver
	// Background are the functions that load LoadBackgroundConfig's settings too.
	Background = Schedule | Deliver
)

var readerNames = []struct {
	r    Readers
	name string
}{{Serve, "serve"}, {API, "api"}, {Task, "task"}, {Ended, "ended"}, {Schedule, "schedule"}, {Deliver, "deliver"}}

// String is the deployments, comma-separated: "serve,api,task,ended,schedule,deliver".
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
	KindOwn           Kind = "own"            // parsed by the one deployment that reads it
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

// Lookup is the row of the setting named name.
func Lookup(name string) (Row, bool) {
	for _, r := range Table {
		if r.Name == name {
			return r, true
		}
	}
	return Row{}, false
}
