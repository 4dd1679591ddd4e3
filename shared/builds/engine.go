package builds

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// EngineLister lists the Unreal Engine versions the service's build hosts provide
// (engines.Dir, engines.Versions).
type EngineLister interface {
	Versions(ctx context.Context) ([]string, error)
}

// EngineChoice is the engine version a build uses and why. Problem, when set, is why the build
// cannot run: the build is made and failed with it.
type EngineChoice struct {
	Version string
	Source  kiln.UEVersionSource
	Problem string
}

// ResolveEngine picks the engine version of a build of setting st of project pr: the setting's
// ueVersion; else the .uproject's EngineAssociation (when it is a version, not a source build's
// GUID); else the organization's default (org may be nil); else the newest version installed
// (installed lists them, nil or empty when unknown). A .uproject naming a version that none of installed
// provides, or no version at all, is a Problem that names the installed ones. A setting on an
// agent pool is not checked against installed: its agents offer their own engines.
func ResolveEngine(st *kiln.BuildSetting, pr *kiln.Project, org *kiln.Organization, installed []string) EngineChoice {
	switch {
	case st.UEVersion != "":
		return EngineChoice{Version: st.UEVersion, Source: kiln.UEVersionFromSetting}
	case uprojectVersion(st, pr) != "":
		v := uprojectVersion(st, pr)
		c := EngineChoice{Version: v, Source: kiln.UEVersionFromUproject}
		if st.AgentPool == "" && len(installed) > 0 && !provides(installed, v) {
			c.Problem = fmt.Sprintf("the .uproject's EngineAssociation names Unreal Engine %s, which no build host provides (installed: %s); "+
				"install it, or set ueVersion on the build setting", v, listOrNone(installed))
		}
		return c
	case org != nil && org.DefaultProjectSettings.UEVersion != "":
		return EngineChoice{Version: org.DefaultProjectSettings.UEVersion, Source: kiln.UEVersionFromOrganization}
	}
	if newest := Newest(installed); newest != "" {
		return EngineChoice{Version: newest, Source: kiln.UEVersionFromNewest}
	}
	return EngineChoice{Source: kiln.UEVersionFromNewest, Problem: "no engine version: the build setting names none, the .uproject's " +
		"EngineAssociation is not a version, the organization has no default and no build host lists its engines; set ueVersion on the build setting"}
}

// uprojectVersion is the EngineAssociation of the .uproject the setting builds, when kiln read
// it and it is a version.
func uprojectVersion(st *kiln.BuildSetting, pr *kiln.Project) string {
	if pr == nil || pr.Uproject == nil {
		return ""
	}
	if st.UprojectPath != "" && st.UprojectPath != pr.Uproject.Path {
		return ""
	}
	if v := pr.Uproject.EngineVersion; kiln.ValidUEVersion(v) {
		return v
	}
	return ""
}

func provides(installed []string, v string) bool {
	for _, c := range engines.Candidates(v) {
		if slices.Contains(installed, c) {
			return true
		}
	}
	return false
}

func listOrNone(vs []string) string {
	if len(vs) == 0 {
		return "none"
	}
	return strings.Join(vs, ", ")
}

// Newest is the highest of dotted versions, compared number by number (5.10 is newer than 5.9);
// "" for none.
func Newest(versions []string) string {
	var best string
	for _, v := range versions {
		if kiln.ValidUEVersion(v) && (best == "" || compareVersions(v, best) > 0) {
			best = v
		}
	}
	return best
}

func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x - y
		}
	}
	return len(pa) - len(pb)
}
