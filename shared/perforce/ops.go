package perforce

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// MaxPrint caps the bytes Print returns.
const MaxPrint = 1 << 20

// Info is what p4 info reports that kiln uses.
type Info struct {
	ServerAddress string
	ServerVersion string
	UserName      string
}

// Info runs p4 info (it answers without a valid ticket; LoginStatus checks the ticket).
func (c *Client) Info(ctx context.Context) (Info, error) {
	recs, err := c.run(ctx, "info")
	if err != nil {
		return Info{}, err
	}
	if len(recs) == 0 {
		return Info{}, &Error{Command: "info", Message: "no output"}
	}
	r := recs[0]
	return Info{ServerAddress: r["serverAddress"], ServerVersion: r["serverVersion"], UserName: r["userName"]}, nil
}

// LoginStatus runs p4 login -s: nil when the ticket in P4PASSWD is valid for the user.
func (c *Client) LoginStatus(ctx context.Context) error {
	_, err := c.run(ctx, "login", "-s")
	return err
}

// Check checks the credentials the way docs/api.md says: trust on first contact (SSL), p4 info,
// p4 login -s. It returns the server's fingerprint ("" over tcp) for the caller to record.
func (c *Client) Check(ctx context.Context) (fingerprint string, err error) {
	if fingerprint, err = c.Trust(ctx); err != nil {
		return "", err
	}
	if _, err = c.Info(ctx); err != nil {
		return "", err
	}
	if err = c.LoginStatus(ctx); err != nil {
		return "", err
	}
	return fingerprint, nil
}

var fingerprintRE = regexp.MustCompile(`^[0-9A-F]{2}(:[0-9A-F]{2}){15,63}$`)

// Trust accepts an SSL server's fingerprint into Dir's trust file (p4 trust -y) and returns it
// (read back with p4 trust -l). When c.Fingerprint is set and the server presents another one,
// it returns an error wrapping ErrTrust. Over tcp it does nothing and returns "".
func (c *Client) Trust(ctx context.Context) (string, error) {
	if !c.Server.SSL() {
		return "", nil
	}
	if _, err := c.exec(ctx, 64<<10, "trust", "-y"); err != nil {
		return "", err
	}
	out, err := c.exec(ctx, 64<<10, "trust", "-l")
	if err != nil {
		return "", err
	}
	fp := trustedFingerprint(string(out), c.Address)
	if fp == "" {
		return "", &Error{Command: "trust", Message: "no fingerprint for the server in p4 trust -l", Kind: ErrTrust}
	}
	if c.Fingerprint != "" && !strings.EqualFold(fp, c.Fingerprint) {
		return "", &Error{Command: "trust", Message: "the server's fingerprint changed since it was recorded", Kind: ErrTrust}
	}
	return fp, nil
}

// trustedFingerprint finds address's fingerprint in p4 trust -l output ("<ip:port> <fp>" lines,
// sometimes with "(alt)" or other words between); a single entry is taken whatever its address.
func trustedFingerprint(out, address string) string {
	var all []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		fp := strings.ToUpper(f[len(f)-1])
		if !fingerprintRE.MatchString(fp) {
			continue
		}
		if f[0] == address || strings.Trim(f[0], "[]") == strings.Trim(address, "[]") {
			return fp
		}
		all = append(all, fp)
	}
	if len(all) == 1 {
		return all[0]
	}
	return ""
}

// checkPath refuses what must not reach p4's argv as a depot path: anything not starting with
// "//" (so never an option) or holding a control character.
func checkPath(p string) error {
	if !strings.HasPrefix(p, "//") || len(p) > 1024 {
		return fmt.Errorf("perforce: invalid depot path %q", p)
	}
	if strings.ContainsFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return errors.New("perforce: depot path holds a control character")
	}
	return nil
}

// StreamExists reports whether stream (//depot/name) is a stream on the server.
func (c *Client) StreamExists(ctx context.Context, stream string) (bool, error) {
	if err := checkStream(stream); err != nil {
		return false, err
	}
	recs, err := c.run(ctx, "streams", stream)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range recs {
		if r["Stream"] == stream {
			return true, nil
		}
	}
	return false, nil
}

// Files lists the depot files matching pattern that are not deleted (p4 files -e), sorted.
func (c *Client) Files(ctx context.Context, pattern string) ([]string, error) {
	return c.list(ctx, "depotFile", "files", "-e", pattern)
}

// Dirs lists the depot directories matching pattern (p4 dirs), sorted.
func (c *Client) Dirs(ctx context.Context, pattern string) ([]string, error) {
	return c.list(ctx, "dir", "dirs", pattern)
}

func (c *Client) list(ctx context.Context, key string, args ...string) ([]string, error) {
	if err := checkPath(args[len(args)-1]); err != nil {
		return nil, err
	}
	recs, err := c.run(ctx, args...)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range recs {
		if v := r[key]; v != "" {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out, nil
}

// FindUprojects lists the .uproject files at most 3 directories deep under stream: the stream
// root and one, two or three directories below it.
func (c *Client) FindUprojects(ctx context.Context, stream string) ([]string, error) {
	var all []string
	for _, mid := range []string{"/", "/*/", "/*/*/", "/*/*/*/"} {
		fs, err := c.Files(ctx, stream+mid+"*.uproject")
		if err != nil {
			return nil, err
		}
		all = append(all, fs...)
	}
	sort.Strings(all)
	return all, nil
}

// Print returns the head revision's content of depotFile (p4 print -q), at most MaxPrint bytes;
// a larger file is an error wrapping ErrTooLarge.
func (c *Client) Print(ctx context.Context, depotFile string) ([]byte, error) {
	if err := checkPath(depotFile); err != nil {
		return nil, err
	}
	if strings.ContainsAny(depotFile, "*") || strings.Contains(depotFile, "...") {
		return nil, fmt.Errorf("perforce: Print takes one file, not %q", depotFile)
	}
	return c.exec(ctx, MaxPrint, "print", "-q", depotFile)
}

// IsChange reports whether s is a changelist number as kiln accepts one: digits, no leading zero.
func IsChange(s string) bool {
	return s != "" && len(s) <= 12 && strings.Trim(s, "0123456789") == "" && s[0] != '0'
}
