// Package onemachine holds what the two services kiln runs on one machine share — kiln serve
// (package serve) and kiln aws-local (package awslocalapp): the data directory's lock, the Local
// organization made on a data directory's first start, the master key's place, and the API
// server's timeouts.
package onemachine
