package kiln

import (
	"fmt"
	"strings"
)

// SettingNames are readable names of a project's build settings, by id: "Platform/BuildType"
// (Linux/Shipping), with "@<branch or stream>" added to the settings of the project that share
// their platform and build type (Linux/Shipping@main, Linux/Shipping@release).
func SettingNames(settings []*BuildSetting) map[string]string {
	count := map[string]int{}
	for _, s := range settings {
		count[shortSettingName(s)]++
	}
	names := make(map[string]string, len(settings))
	for _, s := range settings {
		n := shortSettingName(s)
		if count[n] > 1 {
			n += "@" + s.Ref()
		}
		names[s.ID] = n
	}
	return names
}

func shortSettingName(s *BuildSetting) string { return string(s.Platform) + "/" + string(s.BuildType) }

// ResolveSetting finds the setting of a project that ref names: its id, its readable name (see
// SettingNames), or "Platform/BuildType@ref" even where the short name is unique; platforms and
// build types in any case. A name several settings share is a validation error listing them;
// none is not_found.
func ResolveSetting(settings []*BuildSetting, ref string) (*BuildSetting, error) {
	var matches []*BuildSetting
	base, branch, withBranch := strings.Cut(ref, "@")
	for _, s := range settings {
		if s.ID == ref {
			return s, nil
		}
		if strings.EqualFold(base, shortSettingName(s)) && (!withBranch || branch == s.Ref()) {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 0:
		return nil, Errorf(ENotFound, "no build setting has the id or name %q", ref)
	case 1:
		return matches[0], nil
	}
	names := SettingNames(settings)
	var list []string
	for _, s := range matches {
		list = append(list, fmt.Sprintf("%s (%s)", names[s.ID], s.ID))
	}
	msg := fmt.Sprintf("%q names %d build settings; give one of: %s", ref, len(matches), strings.Join(list, ", "))
	return nil, FieldError(EValidation, msg, "settingId", "names more than one build setting")
}
