package settings

import (
	"fmt"
	"strconv"
	"strings"
)

// Binary size units, largest first.
var sizeUnits = []struct {
	name string
	n    int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// ParseSize reads a size in bytes: a whole number, optionally followed by KiB, MiB, GiB or TiB
// ("50GiB", "500 MiB", "1048576"). It must be positive.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult, num := int64(1), s
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(s, u.name); ok {
			mult, num = u.n, strings.TrimSpace(rest)
			break
		}
	}
	if rest, ok := strings.CutSuffix(num, "B"); ok && mult == 1 {
		num = strings.TrimSpace(rest)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size such as 50GiB, 500MiB or a number of bytes", s)
	}
	return n * mult, nil
}

// FormatSize writes a size as ParseSize reads it, in the largest unit that divides it ("50 GiB",
// "1000 bytes").
func FormatSize(n int64) string {
	for _, u := range sizeUnits {
		if n >= u.n && n%u.n == 0 {
			return fmt.Sprintf("%d %s", n/u.n, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
