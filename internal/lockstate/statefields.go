package lockstate

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of the recorded runner identity (Entry.RunnerName, RunnerOS,
// RunnerArch). GitHub's runner names are short (the registration limit is
// 64 characters); the bound only keeps a hostile document from carrying
// arbitrary payloads in a field every client copies.
const (
	// MaxRunnerNameBytes bounds Entry.RunnerName.
	MaxRunnerNameBytes = 256
	// MaxRunnerPlatformBytes bounds Entry.RunnerOS and Entry.RunnerArch
	// (the runner writes values such as Linux, Windows, macOS, X64, ARM64).
	MaxRunnerPlatformBytes = 32
)

// ParseStateTime parses a timestamp stored in a lock state document. Only
// the canonical Date.prototype.toISOString form that every client writes
// (FormatTime's YYYY-MM-DDTHH:mm:ss.sssZ, a real calendar time) is accepted.
// A value the JavaScript reference could not parse (Date.parse returns NaN
// for "yesterday" or "2026-13-45T99:99:99Z") or would parse differently
// from Go (other ISO shapes, legacy date strings) is therefore never the
// basis of a decision: documents carrying one are refused on read (see
// docs/state-schema.md, "Timestamps").
func ParseStateTime(s string) (time.Time, bool) {
	if len(s) != len(isoLayout) || s[len(s)-1] != 'Z' {
		return time.Time{}, false
	}
	t, err := time.Parse(isoLayout, s)
	if err != nil || t.Format(isoLayout) != s {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// checkTimestamps validates name/value pairs of one entry: each value is
// empty (a legacy default the reader fills or leaves) or canonical.
func checkTimestamps(lock, kind string, index int, holderID string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if v := pairs[i+1]; v != "" {
			if _, ok := ParseStateTime(v); !ok {
				return newError(CodeInvalidTimestamp, fmt.Sprintf(
					"lock state %q: %s %d (%s) has %s %q, which is not a canonical ISO-8601 UTC timestamp (YYYY-MM-DDTHH:mm:ss.sssZ)",
					lock, kind, index, holderID, pairs[i], clip(v, 40)))
			}
		}
	}
	return nil
}

// checkRunnerIdentity validates the recorded runner fields of e.
func checkRunnerIdentity(lock, kind string, index int, e Entry) error {
	for _, f := range [...]struct {
		key, value string
		max        int
	}{{"runnerName", e.RunnerName, MaxRunnerNameBytes}, {"runnerOs", e.RunnerOS, MaxRunnerPlatformBytes}, {"runnerArch", e.RunnerArch, MaxRunnerPlatformBytes}} {
		if f.value == "" {
			continue
		}
		if reason := runnerFieldProblem(f.value, f.max); reason != "" {
			return newError(CodeInvalidRunnerIdentity, fmt.Sprintf("lock state %q: %s %d (%s) has a %s that %s", lock, kind, index, e.HolderID, f.key, reason))
		}
	}
	if e.PendingRunnerID != "" {
		reason := runnerFieldProblem(e.PendingRunnerID, MaxRunnerNameBytes)
		if reason == "" && jsTrim(e.PendingRunnerID) != e.PendingRunnerID {
			reason = "has leading or trailing whitespace"
		}
		if reason != "" {
			return newError(CodeInvalidRunnerIdentity, fmt.Sprintf("lock state %q: %s %d (%s) has a pendingRunnerId that %s", lock, kind, index, e.HolderID, reason))
		}
	}
	return nil
}

// RunnerFieldProblem says why v cannot be recorded as a runner name, OS or
// architecture of at most max bytes ("" when it can): invalid UTF-8, a
// control character, surrounding whitespace, or too long.
func RunnerFieldProblem(v string, max int) string { return runnerFieldProblem(v, max) }

func runnerFieldProblem(v string, max int) string {
	switch {
	case len(v) > max:
		return fmt.Sprintf("is longer than %d bytes", max)
	case !utf8.ValidString(v):
		return "is not valid UTF-8"
	case strings.TrimSpace(v) != v:
		return "has leading or trailing whitespace"
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "contains a control character"
	}
	return ""
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
