package buildsteps

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/sandbox"
)

// BuildInput says what to build with which engine.
type BuildInput struct {
	// ProjectDir is the checkout's root.
	ProjectDir string
	// UprojectPath is the .uproject file, relative to ProjectDir (slash-separated).
	UprojectPath string
	Platform     kiln.Platform
	BuildType    kiln.BuildType
	// RunUAT is the path of the engine's RunUAT.sh, or RunUAT.bat on Windows (engines.Dir.RunUAT).
	RunUAT string
	// ArchiveDir receives RunUAT's archive. It must be missing or empty: give each build its own.
	ArchiveDir string
	// ScratchDir is the build's own directory for RunUAT's $HOME and $TMPDIR (made if missing);
	// "" makes a temporary one, removed after the build.
	ScratchDir string
	// Name names the engine step's resource group (the build's id); "" makes one up.
	Name string
}

// BuildOutput is what RunUAT made.
type BuildOutput struct {
	// StagedDir is the one directory RunUAT left under ArchiveDir (UE5 names it after the
	// platform: Linux, Windows, LinuxServer, ...).
	StagedDir string
	// ProjectName is the .uproject's base name.
	ProjectName string
}

// Build runs RunUAT BuildCookRun on the project (RunUAT.sh; on Windows RunUAT.bat through
// cmd.exe) in stages compile, cook, stage and package, as RunUAT's banners announce them, and
// streams its output into the build log, one line at a time.
// RunUAT runs in a process tree of its own; when ctx ends the whole tree is stopped and Build
// returns ctx's error.
func (a *Steps) Build(ctx context.Context, in BuildInput, r Reporter) (BuildOutput, error) {
	if !in.Platform.Valid() || !in.BuildType.Valid() {
		return BuildOutput{}, fmt.Errorf("agent: build: invalid platform %q or build type %q", in.Platform, in.BuildType)
	}
	if in.ProjectDir == "" || in.RunUAT == "" || in.ArchiveDir == "" {
		return BuildOutput{}, errors.New("agent: build: ProjectDir, RunUAT and ArchiveDir are required")
	}
	projectDir, err := filepath.Abs(in.ProjectDir)
	if err != nil {
		return BuildOutput{}, fmt.Errorf("agent: build: %w", err)
	}
	archiveDir, err := filepath.Abs(in.ArchiveDir)
	if err != nil {
		return BuildOutput{}, fmt.Errorf("agent: build: %w", err)
	}
	runUAT, err := filepath.Abs(in.RunUAT) // a relative path would be taken from ProjectDir
	if err != nil {
		return BuildOutput{}, fmt.Errorf("agent: build: %w", err)
	}
	if err := emptyDir(archiveDir); err != nil {
		return BuildOutput{}, err
	}
	jail, cleanup, err := buildJail(runUAT, projectDir, UprojectDir(projectDir, in.UprojectPath), archiveDir, in.ScratchDir)
	if err != nil {
		return BuildOutput{}, err
	}
	defer cleanup()
	r.Stage(ctx, StageCompile)
	stage := StageCompile

	rel := filepath.FromSlash(in.UprojectPath)
	if !filepath.IsLocal(rel) || !strings.EqualFold(filepath.Ext(rel), ".uproject") {
		return BuildOutput{}, fail(ctx, r, stage, nil, "project file %q is not a .uproject inside the repository", in.UprojectPath)
	}
	uproject := filepath.Join(projectDir, rel)
	if fi, err := os.Stat(uproject); err != nil || !fi.Mode().IsRegular() {
		return BuildOutput{}, fail(ctx, r, stage, err, "project file %s not found in the checkout", in.UprojectPath)
	}
	name := strings.TrimSuffix(filepath.Base(uproject), filepath.Ext(uproject))
	log := a.logger().With("project", name, "platform", in.Platform, "build_type", in.BuildType)
	log.InfoContext(ctx, "agent: build started")

	args := uatArgs(uproject, in.Platform, in.BuildType, archiveDir)
	inv, err := uatCommand(runtime.GOOS, runUAT, args)
	if err != nil {
		return BuildOutput{}, fail(ctx, r, stage, err, "engine step failed: %v", err)
	}
	logf(ctx, r, LevelInfo, "Running: %s %s", runUAT, strings.Join(args, " "))
	step, err := a.confiner().Prepare(jail, inv.Path, inv.Args...)
	if err != nil {
		var se *sandbox.Error
		if errors.As(err, &se) {
			return BuildOutput{}, fail(ctx, r, stage, err, "%s", se.Reason)
		}
		return BuildOutput{}, fmt.Errorf("agent: build: %w", err)
	}
	defer step.Done()
	setCmdLine(step.Cmd, inv.CmdLine)
	group, err := a.limitGroup(in.Name)
	if err != nil {
		return BuildOutput{}, fail(ctx, r, stage, err, "engine step failed: kiln could not set up the build's resource limits")
	}
	defer func() {
		if err := group.Close(); err != nil {
			log.ErrorContext(ctx, "agent: remove the build's resource group", "error", err)
		}
	}()
	// The group is placed after Prepare: on cgroup v1 it hands the group's cgroup.procs to the
	// step's build uid (its Credential), so that the step can move itself in before it execs.
	if err := group.Place(step.Cmd); err != nil {
		return BuildOutput{}, fail(ctx, r, stage, err, "engine step failed: kiln could not set up the build's resource limits")
	}
	// Done (which gives the build's uid back) waits for runGroup: the whole tree is gone by then.
	err = runGroup(ctx, step.Cmd, step.Start, func(line string) {
		if strings.TrimSpace(line) == "" {
			return
		}
		if s, ok := bannerStage(line); ok && s != stage {
			stage = s
			r.Stage(ctx, s)
		}
		r.Log(ctx, LogLine{Time: timeNow(), Level: LineLevel(line), Message: line})
	})
	step.Done()
	if ctx.Err() != nil {
		log.InfoContext(ctx, "agent: build stopped", "cause", context.Cause(ctx))
		return BuildOutput{}, fmt.Errorf("agent: build stopped: %w", ctx.Err())
	}
	if err != nil {
		if reason := group.Exceeded(); reason != "" {
			return BuildOutput{}, fail(ctx, r, stage, err, "%s", reason)
		}
		code, signal, ok := exitCode(err)
		switch {
		case !ok:
			return BuildOutput{}, fail(ctx, r, stage, err, "engine step failed: could not start the engine's %s", filepath.Base(runUAT))
		case signal != "":
			return BuildOutput{}, fail(ctx, r, stage, err, "engine step failed: RunUAT was killed (%s); see the build log", signal)
		default:
			return BuildOutput{}, fail(ctx, r, stage, err, "engine step failed: RunUAT exited with code %d; see the build log", code)
		}
	}

	staged, err := stagedDir(archiveDir)
	if err != nil {
		return BuildOutput{}, fail(ctx, r, stage, err, "%s", err.Error())
	}
	logf(ctx, r, LevelInfo, "RunUAT archived the build in %s", filepath.Base(staged))
	log.InfoContext(ctx, "agent: build done", "staged_dir", staged)
	return BuildOutput{StagedDir: staged, ProjectName: name}, nil
}

// uatArgs are RunUAT's arguments for a build (docs/api.md: "Builds run RunUAT.sh BuildCookRun
// ..."). A Server build makes the dedicated server only, in the Development configuration.
func uatArgs(uproject string, platform kiln.Platform, buildType kiln.BuildType, archiveDir string) []string {
	args := []string{"BuildCookRun", "-project=" + uproject, "-platform=" + string(platform)}
	if buildType == kiln.BuildTypeServer {
		args = append(args, "-server", "-noclient", "-serverconfig=Development")
	} else {
		args = append(args, "-clientconfig="+string(buildType))
	}
	return append(args, "-build", "-cook", "-stage", "-pak", "-archive", "-archivedirectory="+archiveDir,
		"-unattended", "-utf8output", "-noP4")
}

// banner matches RunUAT's command banners, e.g. "********** COOK COMMAND STARTED **********".
var banner = regexp.MustCompile(`\*{10} ([A-Z]+) COMMAND STARTED \*{10}`)

// bannerStage returns the stage a line of RunUAT output starts, if it is a command banner.
func bannerStage(line string) (Stage, bool) {
	m := banner.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	switch m[1] {
	case "BUILD":
		return StageCompile, true
	case "COOK":
		return StageCook, true
	case "STAGE":
		return StageStage, true
	case "PACKAGE", "ARCHIVE":
		return StagePackage, true
	}
	return "", false
}

// buildJail is what RunUAT may touch: the engine read-only; the checkout (but its .git and kiln's
// Perforce marker), the archive directory and the build's scratch directory (its $HOME and
// $TMPDIR) writable.
func buildJail(runUAT, projectDir, uprojectDir, archiveDir, scratch string) (sandbox.Jail, func(), error) {
	cleanup := func() {}
	if scratch == "" {
		dir, err := os.MkdirTemp("", "kiln-build-")
		if err != nil {
			return sandbox.Jail{}, nil, fmt.Errorf("agent: build: scratch directory: %w", err)
		}
		scratch, cleanup = dir, func() { os.RemoveAll(dir) }
	}
	scratch, err := filepath.Abs(scratch)
	if err != nil {
		return sandbox.Jail{}, nil, fmt.Errorf("agent: build: %w", err)
	}
	home, tmp := filepath.Join(scratch, "home"), filepath.Join(scratch, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			cleanup()
			return sandbox.Jail{}, nil, fmt.Errorf("agent: build: scratch directory: %w", err)
		}
	}
	// What kiln itself obeys or trusts in the workspace at the next checkout stays read-only.
	var protected []string
	for _, name := range []string{".git", workspaceMarker} {
		if _, err := os.Lstat(filepath.Join(projectDir, name)); err == nil {
			protected = append(protected, filepath.Join(projectDir, name))
		}
	}
	engine := EngineRoot(runUAT)
	readOnly := []string{engine}
	if real, err := filepath.EvalSymlinks(engine); err == nil && real != engine {
		readOnly = append(readOnly, real) // an engine linked in from elsewhere is seen at both paths
	}
	return sandbox.Jail{
		ReadOnly: readOnly,
		// The engine is read-only: AutomationTool logs go to the scratch directory, and the local
		// derived-data cache to DerivedDataCache/ beside the .uproject (beside Intermediate/),
		// kept in the workspace between builds and in the build cache.
		Env: []string{"uebp_LogFolder=" + filepath.Join(scratch, "uat-logs"),
			"UE-LocalDataCachePath=" + filepath.Join(uprojectDir, "DerivedDataCache")},
		Writable:  []string{projectDir, archiveDir, scratch},
		Protected: protected,
		Dir:       projectDir, Home: home, Tmp: tmp,
	}, cleanup, nil
}

// UprojectDir is the directory of a project's .uproject in its checkout at projectDir, where
// Unreal keeps Intermediate/ and kiln the derived data cache: the build cache's root. A path
// that is not a local one gives projectDir (the build then fails on it).
func UprojectDir(projectDir, uprojectPath string) string {
	rel := filepath.FromSlash(uprojectPath)
	if !filepath.IsLocal(rel) {
		return projectDir
	}
	return filepath.Dir(filepath.Join(projectDir, rel))
}

// EngineRoot is the engine installation a RunUAT.sh belongs to: the directory that holds
// Engine/Build/BatchFiles/RunUAT.sh, or RunUAT's own directory when it is laid out otherwise.
func EngineRoot(runUAT string) string {
	dir := filepath.Dir(runUAT)
	if filepath.ToSlash(dir) != "" && strings.HasSuffix(filepath.ToSlash(dir), "/Engine/Build/BatchFiles") {
		return filepath.Dir(filepath.Dir(filepath.Dir(dir)))
	}
	return dir
}

// emptyDir makes dir, or checks that it is empty.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return fmt.Errorf("agent: build: archive directory: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("agent: build: archive directory %s is not empty", dir)
	}
	return nil
}

// stagedDir returns the one directory RunUAT left under archiveDir.
func stagedDir(archiveDir string) (string, error) {
	entries, err := os.ReadDir(archiveDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no archive directory: could not read the archive directory: %v", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	switch len(dirs) {
	case 0:
		return "", errors.New("no archive directory: RunUAT left nothing under the archive directory")
	case 1:
		return filepath.Join(archiveDir, dirs[0]), nil
	}
	return "", fmt.Errorf("several archive directories: RunUAT left %s under the archive directory; expected one", strings.Join(dirs, ", "))
}
