package kiln

import "slices"

// Platform is a target platform of a build.
type Platform string

const (
	PlatformWin64      Platform = "Win64"
	PlatformLinux      Platform = "Linux"
	PlatformLinuxArm64 Platform = "LinuxArm64"
	PlatformMac        Platform = "Mac"
	PlatformAndroid    Platform = "Android"
	PlatformIOS        Platform = "IOS"
)

// Platforms lists every platform kiln builds for.
var Platforms = []Platform{PlatformWin64, PlatformLinux, PlatformLinuxArm64, PlatformMac, PlatformAndroid, PlatformIOS}

func (p Platform) Valid() bool { return slices.Contains(Platforms, p) }

// BuildType is the build configuration: a client configuration passed to RunUAT as -clientconfig,
// or Server for a dedicated-server build.
type BuildType string

const (
	BuildTypeDevelopment BuildType = "Development"
	BuildTypeShipping    BuildType = "Shipping"
	BuildTypeDebugGame   BuildType = "DebugGame"
	BuildTypeTest        BuildType = "Test"
	BuildTypeServer      BuildType = "Server"
)

// BuildTypes lists every build type.
var BuildTypes = []BuildType{BuildTypeDevelopment, BuildTypeShipping, BuildTypeDebugGame, BuildTypeTest, BuildTypeServer}

func (b BuildType) Valid() bool { return slices.Contains(BuildTypes, b) }

// Trigger says what starts builds of a build setting.
type Trigger string

const (
	TriggerManual    Trigger = "manual"
	TriggerPush      Trigger = "push"
	TriggerScheduled Trigger = "scheduled"
)

// DefaultSchedule is the schedule of a scheduled setting made without one: nightly at 03:00 UTC.
const DefaultSchedule = "0 3 * * *"

// Triggers lists every trigger.
var Triggers = []Trigger{TriggerManual, TriggerPush, TriggerScheduled}

func (t Trigger) Valid() bool { return slices.Contains(Triggers, t) }

// Plan is an organization's plan.
type Plan string

const (
	PlanFree       Plan = "free"
	PlanPro        Plan = "pro"
	PlanEnterprise Plan = "enterprise"
)

// Plans lists every plan.
var Plans = []Plan{PlanFree, PlanPro, PlanEnterprise}

func (p Plan) Valid() bool { return slices.Contains(Plans, p) }

// SourceControl is where a project's code lives.
type SourceControl string

const (
	SourceGitHub   SourceControl = "github"
	SourcePerforce SourceControl = "perforce"
)

func (s SourceControl) Valid() bool { return s == SourceGitHub || s == SourcePerforce }

// AutoDeployStatus records how the delivery of a build's artifact went. The empty value means auto
// deploy does not apply to the build (null in the API).
type AutoDeployStatus string

const (
	AutoDeployNone       AutoDeployStatus = ""
	AutoDeployPending    AutoDeployStatus = "pending"
	AutoDeployDelivering AutoDeployStatus = "delivering"
	AutoDeploySucceeded  AutoDeployStatus = "succeeded"
	AutoDeployFailed     AutoDeployStatus = "failed"
)

// enumNames turns an enum list into strings, for error messages.
func enumNames[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
