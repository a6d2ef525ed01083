package actionkit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxMillis bounds a millisecond knob (one year): beyond it the duration
// arithmetic is meaningless for a job that lives at most 35 days.
const MaxMillis = int64(365 * 24 * time.Hour / time.Millisecond)

// ParseMillis parses raw, the value of a non-negative integer millisecond
// knob such as BUILD_LOCK_AUTH_GRACE_MS, as an action's settings read it.
// Empty means def; a value that is not all ASCII digits is ignored with a
// warning (spec §3.6: knobs are never fatal).
func ParseMillis(name, raw string, def time.Duration) (time.Duration, string) {
	raw = strings.TrimSpace(raw)
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
	if !ok || err != nil || n > MaxMillis {
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
