package actionkit

import (
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// NewReservationID returns a random RFC 4122 version 4 UUID, the
// reservation ID format of the reference (crypto.randomUUID).
func NewReservationID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

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
