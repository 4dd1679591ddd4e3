package github

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// MaxUprojectSize bounds a .uproject file kiln reads.
const MaxUprojectSize = 1 << 20

// uprojectFile is the part of Unreal's project descriptor kiln reads.
type uprojectFile struct {
	EngineAssociation string
	Modules           []struct{ Name, Type, LoadingPhase string }
	Plugins           []struct {
		Name    string
		Enabled bool
	}
}

// ParseUproject reads a .uproject file (JSON, possibly with a UTF-8 byte order mark). The project
// name is the file's base name; the engine version is EngineAssociation as written ("5.3"; a GUID
// or "" for source-built engines). Bad files give validation_failed on uprojectPath with the
// reason, such as a trailing comma and its line.
func ParseUproject(p string, data []byte) (*kiln.UprojectInfo, error) {
	if len(data) > MaxUprojectSize {
		return nil, tooLarge(p)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, badUproject(p, "is not a JSON object")
	}
	var f uprojectFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, badUproject(p, describeJSONError(data, err))
	}
	info := &kiln.UprojectInfo{
		Path:          p,
		ProjectName:   strings.TrimSuffix(path.Base(p), ".uproject"),
		EngineVersion: strings.TrimSpace(f.EngineAssociation),
		Modules:       []kiln.UprojectModule{},
		Plugins:       []kiln.UprojectPlugin{},
	}
	for _, m := range f.Modules {
		info.Modules = append(info.Modules, kiln.UprojectModule{Name: m.Name, Type: m.Type, LoadingPhase: m.LoadingPhase})
	}
	for _, pl := range f.Plugins {
		info.Plugins = append(info.Plugins, kiln.UprojectPlugin{Name: pl.Name, Enabled: pl.Enabled})
	}
	return info, nil
}

// describeJSONError says what is wrong and on which line.
func describeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		at := int(syn.Offset) - 1 // the offending byte
		if at >= 0 && at < len(data) && (data[at] == '}' || data[at] == ']') {
			before := bytes.TrimRight(data[:at], " \t\r\n")
			if len(before) > 0 && before[len(before)-1] == ',' {
				return fmt.Sprintf("is not valid JSON: trailing comma on line %d", lineOf(data, len(before)-1))
			}
		}
		return fmt.Sprintf("is not valid JSON: %s on line %d", syn.Error(), lineOf(data, max(at, 0)))
	case errors.As(err, &typ):
		return fmt.Sprintf("is not a valid project file: %s must not be a JSON %s (line %d)", typ.Field, typ.Value, lineOf(data, int(typ.Offset)))
	default:
		return "is not valid JSON: " + err.Error()
	}
}

func lineOf(data []byte, offset int) int {
	return 1 + bytes.Count(data[:min(offset, len(data))], []byte("\n"))
}

func badUproject(p, problem string) *kiln.Error {
	return kiln.FieldError(kiln.EValidation, p+" "+problem, "uprojectPath", p+" "+problem)
}

func tooLarge(p string) *kiln.Error {
	return badUproject(p, "is larger than 1 MiB")
}
