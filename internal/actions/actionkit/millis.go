package actionkit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// EnvMillis reads a non-negative integer millisecond knob such as
// BUILD_LOCK_AUTH_GRACE_MS. Empty means def; a value that is not all ASCII
// digits is ignored with a warning (spec §3.6: knobs are never fatal).
func EnvMillis(getenv func(string) string, name string, def time.Duration) (time.Duration, string) {
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return def, ""
	}
	ok := true
	for i := 0; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			ok = false
		}
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if !ok || err != nil || n > int64(365*24*time.Hour/time.Millisecond) {
		return def, fmt.Sprintf("Ignoring invalid %s; expected a non-negative integer number of milliseconds.", name)
	}
	return time.Duration(n) * time.Millisecond, ""
}

// FormatMillis renders d as whole milliseconds, the unit of wait-ms.
func FormatMillis(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}
