package buildsteps

import (
	"slices"
	"strings"
	"testing"
)

func TestUATCommand(t *testing.T) {
	args := []string{"BuildCookRun", "-project=/src/Game.uproject", "-platform=Linux"}
	winArgs := []string{"BuildCookRun", `-project=C:\Unreal Projects\Game (1)\Game.uproject`, "-platform=Win64",
		`-archivedirectory=C:\kiln\staging\b1\archive\`, "-unattended"}
	winUAT := `C:\Program Files\Epic Games\UE_5.4\Engine\Build\BatchFiles\RunUAT.bat`
	for _, tc := range []struct {
		name, goos, runUAT string
		args               []string
		wantPath           string
		wantArgs           []string
		wantLine           string
		wantErr            string
	}{
		{name: "linux runs RunUAT.sh itself", goos: "linux", runUAT: "/engines/5.4/Engine/Build/BatchFiles/RunUAT.sh", args: args,
			wantPath: "/engines/5.4/Engine/Build/BatchFiles/RunUAT.sh", wantArgs: args},
		{name: "darwin runs RunUAT.sh itself", goos: "darwin", runUAT: "/e/RunUAT.sh", args: args, wantPath: "/e/RunUAT.sh", wantArgs: args},
		{name: "windows runs RunUAT.bat through cmd.exe", goos: "windows", runUAT: winUAT, args: winArgs,
			wantPath: "cmd.exe", wantArgs: append([]string{"/d", "/s", "/c", winUAT}, winArgs...),
			wantLine: `cmd.exe /d /s /c ""C:\Program Files\Epic Games\UE_5.4\Engine\Build\BatchFiles\RunUAT.bat" BuildCookRun ` +
				`-project="C:\Unreal Projects\Game (1)\Game.uproject" -platform=Win64 -archivedirectory=C:\kiln\staging\b1\archive\ -unattended"`},
		{name: "windows quotes a trailing backslash safely", goos: "windows", runUAT: `C:\UE\RunUAT.bat`, args: []string{`-archivedirectory=C:\My Builds\`},
			wantPath: "cmd.exe", wantArgs: []string{"/d", "/s", "/c", `C:\UE\RunUAT.bat`, `-archivedirectory=C:\My Builds\`},
			wantLine: `cmd.exe /d /s /c "C:\UE\RunUAT.bat -archivedirectory="C:\My Builds\\""`},
		{name: "windows refuses a percent sign", goos: "windows", runUAT: winUAT, args: []string{`-project=C:\p\%PATH%\G.uproject`}, wantErr: "cmd.exe would change"},
		{name: "windows refuses a quote", goos: "windows", runUAT: winUAT, args: []string{`-project=C:\p\"&calc\G.uproject`}, wantErr: "cmd.exe would change"},
		{name: "windows refuses a line break", goos: "windows", runUAT: winUAT, args: []string{"-project=C:\\p\r\nG.uproject"}, wantErr: "cmd.exe would change"},
		{name: "linux passes any character as it is", goos: "linux", runUAT: "/e/RunUAT.sh", args: []string{`-project=/p/%PATH%"/G.uproject`},
			wantPath: "/e/RunUAT.sh", wantArgs: []string{`-project=/p/%PATH%"/G.uproject`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := uatCommand(tc.goos, tc.runUAT, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Path != tc.wantPath || !slices.Equal(got.Args, tc.wantArgs) || got.CmdLine != tc.wantLine {
				t.Errorf("got\n  path %q\n  args %q\n  line %s\nwant\n  path %q\n  args %q\n  line %s",
					got.Path, got.Args, got.CmdLine, tc.wantPath, tc.wantArgs, tc.wantLine)
			}
		})
	}
}
