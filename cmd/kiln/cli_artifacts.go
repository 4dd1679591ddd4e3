package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kilnbuild/kiln/shared/client"
)

// artifacts runs kiln artifacts download.
func artifacts(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "download" {
		if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
			return groupHelp(stdout, "artifacts")
		}
		return errNoSuchCommand("artifacts", args, "download")
	}
	fs := flag.NewFlagSet("kiln artifacts download", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the file to write (default: <Project>-<Platform>-<BuildType>-<number>.tar.gz in the current directory; <build>.tar.gz for a build without a number)")
	asJSON := fs.Bool("json", false, "print the downloaded file's path, size and MD5 as JSON")
	project := projectOfNumber(fs)
	pos, err := parseArgs(fs, args[1:], 1)
	if err != nil {
		return err
	}
	c, err := apiClient(getenv)
	if err != nil {
		return err
	}
	id, err := resolveBuild(ctx, c, "kiln artifacts download", pos[0], *project)
	if err != nil {
		return err
	}
	if *out == "" && !plainFileName(id) {
		return usageErr("%q is not a build id", id)
	}
	link, err := c.DownloadLink(ctx, id)
	if err != nil {
		return err
	}
	dst := *out
	if dst == "" {
		dst = id + ".tar.gz"
		if plainFileName(link.FileName) { // the server's name, unless it could leave this directory
			dst = link.FileName
		}
	}
	var progress func(done, total int64)
	bar := &progressBar{}
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		bar.w = f
		progress = bar.update
	}
	err = c.Fetch(ctx, link, dst, progress)
	bar.finish() // before anything else is printed, success or not
	var mismatch *client.MismatchError
	if errors.As(err, &mismatch) {
		return &failure{err.Error()}
	}
	if err != nil {
		return fmt.Errorf("%w (run the command again to resume)", err)
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"path": dst, "sizeBytes": link.SizeBytes, "checksumMd5": link.ChecksumMD5})
	}
	fmt.Fprintf(stdout, "%s (%s), verified MD5 %s\n", dst, bytesText(link.SizeBytes), link.ChecksumMD5)
	return nil
}

// progressBar draws one line on a terminal: a bar, the percentage and the bytes.
type progressBar struct {
	w       io.Writer
	lastPct int
	drawn   bool
}

func (p *progressBar) update(done, total int64) {
	pct := 100
	if total > 0 {
		pct = int(done * 100 / total)
	}
	if p.drawn && pct == p.lastPct {
		return
	}
	p.lastPct, p.drawn = pct, true
	const width = 30
	fill := pct * width / 100
	fmt.Fprintf(p.w, "\r[%s%s] %3d%% %s / %s", strings.Repeat("#", fill), strings.Repeat(" ", width-fill), pct, bytesText(done), bytesText(total))
}

// finish ends the bar's line, once.
func (p *progressBar) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// bytesText is n in B, KiB, MiB or GiB.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 2 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, []string{"KiB", "MiB", "GiB"}[i])
}

// plainFileName reports whether name is a file name of the current directory: not empty, no
// directory part, not hidden.
func plainFileName(name string) bool {
	return name != "" && !strings.ContainsAny(name, `/\:`) && !strings.HasPrefix(name, ".")
}
