package stack_test

import (
	"slices"
	"testing"
)

// TestWarmPoolsWaitForTheirHook: each host group's warm pool depends on the group's launch
// lifecycle hook, so no warm instance launches before the hook that holds it for its user data
// exists (the Windows and the Linux group).
func TestWarmPoolsWaitForTheirHook(t *testing.T) {
	pools := hostsResources(t, "AWS::AutoScaling::WarmPool")
	if len(pools) != 2 {
		t.Fatalf("warm pools: %d, want the Windows and the Linux group's", len(pools))
	}
	hookOf := map[string]string{} // group's logical id → its hook's
	for id, h := range hostsResources(t, "AWS::AutoScaling::LifecycleHook") {
		hookOf[h["Properties"].(obj)["AutoScalingGroupName"].(obj)["Ref"].(string)] = id
	}
	for id, p := range pools {
		group := p["Properties"].(obj)["AutoScalingGroupName"].(obj)["Ref"].(string)
		hook := hookOf[group]
		if hook == "" {
			t.Errorf("warm pool %s: its group %s has no lifecycle hook", id, group)
			continue
		}
		var deps []string
		for _, d := range asList(p["DependsOn"]) {
			deps = append(deps, d.(string))
		}
		if !slices.Contains(deps, hook) {
			t.Errorf("warm pool %s DependsOn %v, want its group's hook %s", id, deps, hook)
		}
	}
}
