// Package awslocal carries the scripts of kiln aws-local that run outside Go, so that the kiln
// binary has them wherever it runs.
package awslocal

import _ "embed"

// StepFunctions is stepfunctions.mjs: the Step Functions stand-in (Node 20 and
// aws-local-stepfunctions).
//
//go:embed stepfunctions.mjs
var StepFunctions []byte
