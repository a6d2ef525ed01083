package evidence

import (
	"regexp"
	"sort"
	"strings"
)

// Redacted replaces every secret in evidence text.
const Redacted = "[REDACTED]"

// serialRE matches Unity activation serials (facts §2), case-insensitively
// like the reference's /\bSC-[A-Za-z0-9-]{8,}\b/gi. Go's \b is the same
// ASCII word boundary as JavaScript's without the u flag, and Go's
// leftmost-first matching backtracks the greedy run the same way.
var serialRE = regexp.MustCompile(`(?i)\bSC-[A-Za-z0-9-]{8,}\b`)

// Redact returns text with every non-empty credential value replaced by
// [Redacted], longest first (so a credential containing another is not left
// half visible), then every activation serial. It is one pass, as in the
// reference: a credential that is itself a substring of "[REDACTED]" or
// contains a bracket can reappear at a marker's edge, which no real Unity
// credential does.
func Redact(text string, credentials ...string) string {
	creds := make([]string, 0, len(credentials))
	for _, c := range credentials {
		if c != "" {
			creds = append(creds, c)
		}
	}
	sort.SliceStable(creds, func(i, j int) bool {
		if len(creds[i]) != len(creds[j]) {
			return len(creds[i]) > len(creds[j])
		}
		return creds[i] < creds[j]
	})
	for _, c := range creds {
		text = strings.ReplaceAll(text, c, Redacted)
	}
	if !mayHoldSerial(text) {
		return text // the regexp costs seconds on a 25 MiB log; most logs hold no "SC-"
	}
	return serialRE.ReplaceAllLiteralString(text, Redacted)
}

// mayHoldSerial reports whether text contains "sc-" in any case, the
// literal start of every serial.
func mayHoldSerial(text string) bool {
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '-')
		if j < 0 {
			return false
		}
		k := i + j
		if k >= 2 && (text[k-1]|0x20) == 'c' && (text[k-2]|0x20) == 's' {
			return true
		}
		i = k + 1
	}
}
