package settings

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// ParseCount reads a whole number, 1 or more.
func ParseCount(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, errors.New("must be a whole number, 1 or more")
	}
	return n, nil
}

// ParseRate reads a number of requests per second, 0 or more (0: no limit).
func ParseRate(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("must be a number of requests per second, 0 or more")
	}
	return f, nil
}

// ParseDuration is the parser of a positive Go duration; its error gives example ("2s").
func ParseDuration(example string) func(string) (time.Duration, error) {
	return func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, errors.New("must be a positive duration such as " + example)
		}
		return d, nil
	}
}

// ParseDays reads a positive duration given in whole days ("30d") or as Go writes it ("72h").
func ParseDays(v string) (time.Duration, error) {
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(v, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		if err == nil && (n < 0 || n > math.MaxInt64/int(24*time.Hour)) {
			err = errors.New("out of range")
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(v)
	}
	if err != nil || d <= 0 {
		return 0, errors.New("must be a positive duration such as 30d or 72h")
	}
	return d, nil
}

// ParsePublicURL reads the base URL users and build hosts reach kiln at: empty (unset), or an
// absolute http or https URL without a query or fragment, returned without a trailing slash
// (links are that base followed by a path).
func ParsePublicURL(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("must be an absolute http or https URL")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", errors.New("must be an absolute http or https URL without a query or fragment")
	}
	return strings.TrimRight(v, "/"), nil
}

// ParseHTTPBase reads a REST or web base URL: absolute http or https, returned ending in a slash.
func ParseHTTPBase(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("must be an absolute http or https URL")
	}
	if !strings.HasSuffix(v, "/") {
		v += "/"
	}
	return v, nil
}

// ParseSMTPURL reads a mail server: empty (none), smtp://user:pass@host:port or smtps://...
func ParseSMTPURL(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Host == "" {
		return "", errors.New("must be an smtp:// or smtps:// URL")
	}
	return v, nil
}

// ParsePlans reads the plans' limits: the defaults when v is empty, else those of the JSON
// file v.
func ParsePlans(v string) (kiln.PlanTable, error) {
	if v == "" {
		return kiln.DefaultPlans(), nil
	}
	return kiln.LoadPlans(v)
}

// ParseAppID reads a GitHub App's id: 0 when empty (no App), else a positive number.
func ParseAppID(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("must be the App's numeric id")
	}
	return n, nil
}

// ParseArtifactStore reads where artifacts are kept: "file" (on the machine's disk) or an S3
// location, s3://bucket[/prefix].
func ParseArtifactStore(v string) (string, error) {
	if v == "file" {
		return v, nil
	}
	if err := ParseS3Store(v); err != nil {
		return "", fmt.Errorf("must be file or s3://bucket[/prefix]: %w", err)
	}
	return v, nil
}

// ParseS3Store checks an S3 artifact store, s3://bucket[/prefix]: the only kind a deployment
// without a disk (the AWS functions) may use.
func ParseS3Store(v string) error {
	_, err := s3artifacts.ParseURL(v)
	return err
}

// ParseSignUp reads KILN_SIGNUP: true for github (GitHub sign-in and self-service organizations),
// false for off.
func ParseSignUp(v string) (bool, error) {
	switch v {
	case "github":
		return true, nil
	case "off":
		return false, nil
	}
	return false, errors.New("must be github or off")
}
