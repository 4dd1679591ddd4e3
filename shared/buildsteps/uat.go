package buildsteps

import (
	"fmt"
	"strings"
)

// uatInvocation is how RunUAT is started on one operating system.
type uatInvocation struct {
	// Path and Args are the program and its arguments (Args without the program's name).
	Path string
	Args []string
	// CmdLine, on Windows, is the whole command line the process gets: cmd.exe does not parse
	// the quoting Go writes for each argument, so it is written here the way cmd.exe reads it.
	CmdLine string
}

// uatCommand returns how RunUAT runs with args on goos: RunUAT.sh itself, or on Windows
// RunUAT.bat through cmd.exe /c, as Epic's documentation runs it. On Windows it refuses an
// argument cmd.exe would change (a " or a %, which expands variables even inside quotes, or a line
// break) rather than pass it on altered.
func uatCommand(goos, runUAT string, args []string) (uatInvocation, error) {
	if goos != "windows" {
		return uatInvocation{Path: runUAT, Args: args}, nil
	}
	words := make([]string, 0, len(args)+1)
	for _, a := range append([]string{runUAT}, args...) {
		if strings.ContainsAny(a, "\"%\r\n\x00") {
			return uatInvocation{}, fmt.Errorf("argument %q holds a character cmd.exe would change (\" %% or a line break)", a)
		}
		words = append(words, cmdQuote(a))
	}
	// /d: no AutoRun commands from the registry; /s: cmd.exe takes what is between the first and
	// the last quote as it is, so the quoted program name and arguments survive.
	line := `cmd.exe /d /s /c "` + strings.Join(words, " ") + `"`
	return uatInvocation{Path: "cmd.exe", Args: append([]string{"/d", "/s", "/c", runUAT}, args...), CmdLine: line}, nil
}

// cmdQuote quotes an argument for cmd.exe and the program after it when it holds a space or a
// character cmd.exe treats specially. An -option=value is quoted after the "=", as the Unreal
// Editor writes it (-project="C:/Unreal Projects/Game/Game.uproject"). A trailing backslash is
// doubled so that it does not escape the closing quote.
func cmdQuote(a string) string {
	const special = " \t&|<>^(),;"
	key, value, isOption := "", a, false
	if strings.HasPrefix(a, "-") {
		if k, v, ok := strings.Cut(a, "="); ok {
			key, value, isOption = k+"=", v, true
		}
	}
	if value != "" && !strings.ContainsAny(value, special) {
		return a
	}
	if !isOption && value == "" {
		return `""`
	}
	n := len(value) - len(strings.TrimRight(value, `\`))
	return key + `"` + value + strings.Repeat(`\`, n) + `"`
}
