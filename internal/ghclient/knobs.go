package ghclient

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Environment variables holding the shared retry knobs (spec §3.6).
const (
	// EnvMaxAttempts caps attempts (1-100).
	EnvMaxAttempts = "BUILD_LOCK_API_MAX_ATTEMPTS"
	// EnvRetryBaseMS is the first backoff step in ms (100-60000).
	EnvRetryBaseMS = "BUILD_LOCK_API_RETRY_BASE_MS"
	// EnvRetryMaxMS caps self-generated backoff in ms (1000-300000).
	EnvRetryMaxMS = "BUILD_LOCK_API_RETRY_MAX_MS"
)

// Defaults and valid ranges of the retry knobs (spec §3.6, Appendix A).
const (
	// DefaultMaxAttempts bounds an attempt-bounded call (no deadline) when
	// no knob is set: 4 sleeps, roughly 15 s with the default backoff.
	DefaultMaxAttempts = 5
	// DefaultRetryBase is the first exponential backoff step.
	DefaultRetryBase = 1000 * time.Millisecond
	// DefaultRetryMax caps self-generated backoff (and the instruction floor).
	DefaultRetryMax = 10000 * time.Millisecond
	// DefaultRetryAfterCeiling caps a server-directed wait on attempt-bounded
	// calls; a deadline replaces it ("Server-Directed Retry Waits").
	DefaultRetryAfterCeiling = 60 * time.Second

	// MinMaxAttempts and MaxMaxAttempts bound BUILD_LOCK_API_MAX_ATTEMPTS.
	MinMaxAttempts = 1
	MaxMaxAttempts = 100
	// MinRetryBase and MaxRetryBase bound BUILD_LOCK_API_RETRY_BASE_MS; a
	// zero backoff is deliberately not configurable.
	MinRetryBase = 100 * time.Millisecond
	MaxRetryBase = 60000 * time.Millisecond
	// MinRetryMax and MaxRetryMax bound BUILD_LOCK_API_RETRY_MAX_MS.
	MinRetryMax = 1000 * time.Millisecond
	MaxRetryMax = 300000 * time.Millisecond
)

// Knobs are the shared backoff settings. A zero field means "unset": Base and
// Max then use their defaults, and MaxAttempts lets the [Budget] decide (5 for
// attempt-bounded calls, unlimited under a deadline). An explicit MaxAttempts
// also caps deadline-bound calls (spec §3.6, "Release Retry Budget").
type Knobs struct {
	MaxAttempts int
	Base        time.Duration
	Max         time.Duration
}

// DefaultKnobs returns the documented defaults with MaxAttempts unset.
func DefaultKnobs() Knobs {
	return Knobs{Base: DefaultRetryBase, Max: DefaultRetryMax}
}

// Validate reports an error when a set field lies outside its range.
func (k Knobs) Validate() error {
	if k.MaxAttempts != 0 && (k.MaxAttempts < MinMaxAttempts || k.MaxAttempts > MaxMaxAttempts) {
		return fmt.Errorf("ghclient: max attempts %d outside %d-%d", k.MaxAttempts, MinMaxAttempts, MaxMaxAttempts)
	}
	if k.Base != 0 && (k.Base < MinRetryBase || k.Base > MaxRetryBase) {
		return fmt.Errorf("ghclient: retry base %s outside %s-%s", k.Base, MinRetryBase, MaxRetryBase)
	}
	if k.Max != 0 && (k.Max < MinRetryMax || k.Max > MaxRetryMax) {
		return fmt.Errorf("ghclient: retry max %s outside %s-%s", k.Max, MinRetryMax, MaxRetryMax)
	}
	return nil
}

// withDefaults fills unset Base and Max.
func (k Knobs) withDefaults() Knobs {
	if k.Base == 0 {
		k.Base = DefaultRetryBase
	}
	if k.Max == 0 {
		k.Max = DefaultRetryMax
	}
	return k
}

// KnobsFromValues parses the values of the three knob variables
// (EnvMaxAttempts, EnvRetryBaseMS, EnvRetryMaxMS), as an action's settings
// read them. An empty value is unset. A value that is not all ASCII digits
// or lies outside its range is ignored with a warning "Ignoring invalid
// NAME=value; expected an integer between A and B." (spec §3.6; never
// fatal: a tuning typo must not fail a release). Base and Max come back
// filled with their defaults when unset or invalid; MaxAttempts stays 0
// when unset or invalid.
func KnobsFromValues(maxAttempts, retryBaseMS, retryMaxMS string) (Knobs, []string) {
	k := DefaultKnobs()
	var warnings []string
	if v, ok, w := parseKnob(EnvMaxAttempts, maxAttempts, MinMaxAttempts, MaxMaxAttempts); ok {
		k.MaxAttempts = v
	} else if w != "" {
		warnings = append(warnings, w)
	}
	if v, ok, w := parseKnob(EnvRetryBaseMS, retryBaseMS, int(MinRetryBase/time.Millisecond), int(MaxRetryBase/time.Millisecond)); ok {
		k.Base = time.Duration(v) * time.Millisecond
	} else if w != "" {
		warnings = append(warnings, w)
	}
	if v, ok, w := parseKnob(EnvRetryMaxMS, retryMaxMS, int(MinRetryMax/time.Millisecond), int(MaxRetryMax/time.Millisecond)); ok {
		k.Max = time.Duration(v) * time.Millisecond
	} else if w != "" {
		warnings = append(warnings, w)
	}
	return k, warnings
}

// ParseKnob validates one knob value (from the environment or an action
// input) against [lo, hi]. It returns the value and true when valid; for a
// non-empty invalid value it returns the warning text instead.
func ParseKnob(name, raw string, lo, hi int) (int, bool, string) {
	return parseKnob(name, raw, lo, hi)
}

func parseKnob(name, raw string, lo, hi int) (int, bool, string) {
	if raw == "" {
		return 0, false, ""
	}
	warn := fmt.Sprintf("Ignoring invalid %s=%s; expected an integer between %d and %d.", name, printable(raw), lo, hi)
	if !isDigits(raw) {
		return 0, false, warn
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return 0, false, warn
	}
	return n, true, ""
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// printable makes a value safe to echo in a workflow-command line: control
// characters (a newline could start a new "::command::") become '?', and the
// text is bounded.
func printable(s string) string {
	const limit = 64
	var b strings.Builder
	for i, r := range s {
		if i >= limit {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7f {
			b.WriteByte('?')
			continue
		}
		b.WriteRune(r)
	}
	return redactText(b.String())
}
