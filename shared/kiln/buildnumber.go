package kiln

import (
	"strconv"
	"strings"
)

// Label is how people name the build: "#<number>", or its id for a build without a number.
func (b *Build) Label() string {
	if b.Number > 0 {
		return "#" + strconv.FormatInt(b.Number, 10)
	}
	return b.ID
}

// maxFileNameProject bounds the project's part of an artifact file name.
const maxFileNameProject = 64

// ArtifactFileName is the name the build's artifact is saved under:
// "<project>-<platform>-<buildType>-<number>.tar.gz", with the project's name made safe for a file
// name on any system (letters, digits, '.', '_' and '-' kept, runs of anything else become one
// '_'). A build without a number, or whose project name leaves nothing, falls back to
// "<build id>.tar.gz".
func (b *Build) ArtifactFileName(projectName string) string {
	name := safeFileName(projectName)
	if b.Number <= 0 || name == "" {
		return b.ID + ".tar.gz"
	}
	return name + "-" + string(b.Platform) + "-" + string(b.BuildType) + "-" + strconv.FormatInt(b.Number, 10) + ".tar.gz"
}

// safeFileName keeps the ASCII letters, digits, '.', '_' and '-' of s, turns each run of other
// characters into one '_', trims '.', '_' and '-' from both ends (no hidden or odd names) and
// cuts the result to maxFileNameProject bytes.
func safeFileName(s string) string {
	var out strings.Builder
	gap := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			if gap && out.Len() > 0 {
				out.WriteByte('_')
			}
			gap = false
			out.WriteRune(r)
		default:
			gap = true
		}
	}
	name := out.String()
	if len(name) > maxFileNameProject {
		name = name[:maxFileNameProject]
	}
	return strings.Trim(name, "._-")
}
