package iam

import "fmt"

// FunctionConfig is what the template configures of a function that Lambda bills by: its
// memory (MemorySize, MB; Lambda's default 128) and architecture (Architectures; default x86_64).
type FunctionConfig struct {
	MemoryMB     int
	Architecture string
}

// FunctionConfigs are the configurations of the template's functions, by name (api, task, ...).
func (t *Template) FunctionConfigs() (map[string]FunctionConfig, error) {
	out := map[string]FunctionConfig{}
	for name, id := range t.Functions {
		props := t.resources[id].Properties
		c := FunctionConfig{MemoryMB: 128, Architecture: "x86_64"}
		if v, ok := props["MemorySize"]; ok {
			mb, ok := v.(float64)
			if !ok || mb < 128 {
				return nil, fmt.Errorf("iam: function %s: MemorySize %v is not a literal number of MB", name, v)
			}
			c.MemoryMB = int(mb)
		}
		if archs, ok := props["Architectures"].([]any); ok && len(archs) == 1 {
			if a, ok := archs[0].(string); ok {
				c.Architecture = a
			}
		}
		out[name] = c
	}
	return out, nil
}
