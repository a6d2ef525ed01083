package evidence

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Reasons the classifier reports beyond lockstate's named ones (all in
// lockstate.AllowedReasons, spec §1.15).
const (
	ReasonReturnLogTruncated      = "return-log-truncated"
	ReasonReturn400006            = "unity-return-400006"
	ReasonReturnTerminated        = "return-terminated"
	ReasonReturnTimeout           = "return-timeout"
	Reason20113Unclassified       = "unity-20113-unclassified"
	ReasonReturnULFSkipped        = "return-ulf-skipped"
	ReasonMissingPositiveEvidence = "return-missing-positive-evidence"
	ReasonAccountLimit            = lockstate.ReasonAccountLimit
	ReasonCleanupConfirmed        = lockstate.ReasonCleanupConfirmed
	TimeoutExitCode               = 124
	entitlementLine               = "Successfully returned the entitlement license"
	entitlementLineModule         = "[Licensing::Module] Successfully returned the entitlement license"
	jsWhitespaceClass             = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`
	jsNonWhitespaceClass          = `[^\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`
	ruleNameAccountLimit          = "account-limit-20111"
	ruleNameAmbiguous20111        = "20111-not-a-whole-number"
	ruleNameCaptureIncomplete     = "capture-incomplete"
	ruleNameReturn400006          = "return-400006"
	ruleNameTerminated            = "terminated-exit-code"
	ruleNameTimeout               = "timeout-exit-code"
	ruleName20113                 = "unclassified-20113"
	ruleNameULFSkipped            = "ulf-skipped"
	ruleNameConfirmed             = "both-positive-lines"
	ruleNameMissingPositive       = "missing-positive-evidence"
)

// TerminatedExitCodes are the exit codes of a terminated return command:
// 128+SIGKILL, 128+SIGTERM, STATUS_CONTROL_C_EXIT and
// STATUS_STACK_BUFFER_OVERRUN as signed 32-bit values (facts §3).
var TerminatedExitCodes = []int64{137, 143, -1073741510, -1073740791}

// The patterns of facts §3. JavaScript's \s is Unicode-aware, Go's is
// ASCII; the classes above spell out ECMAScript WhiteSpace and
// LineTerminator so the ULF line matches exactly what the reference matches.
var (
	marker20111   = regexp.MustCompile(`(?:^|[^0-9])20111(?:$|[^0-9])`)
	marker20113   = regexp.MustCompile(`(?:^|[^0-9])20113(?:$|[^0-9])`)
	marker400006  = regexp.MustCompile(`(?:^|[^0-9])400006(?:$|[^0-9])`)
	ulfReturnedRE = regexp.MustCompile(`^\[Licensing::Client\] Successfully returned ULF license with serial number` + jsWhitespaceClass + `*:` + jsWhitespaceClass + `*` + jsNonWhitespaceClass + `+$`)
	ulfSkippedRE  = regexp.MustCompile(`^(?:\[Licensing::Module\] Error: )?Serial number unavailable for ULF return(?:; skipping operation)?$`)
)

// Rule is one row of the §1.10 precedence: Number 1 (most severe) to 9.
type Rule struct {
	// Number is the rule's position in the precedence, 1-9.
	Number int
	// Name is a stable identifier of the rule for logs and summaries.
	Name string
}

// Input is everything the precedence looks at.
type Input struct {
	// Completed is the return action's return-command-completed.
	Completed bool
	// ExitCode is return-exit-code; meaningful only when Completed.
	ExitCode int64
	// CaptureComplete is false when the return action reported an
	// incomplete capture or the classifier's own bounded read of any
	// evidence file fell short.
	CaptureComplete bool
	// ReturnLog is the decoded text of return-license.log.
	ReturnLog string
	// Supplemental are the decoded texts of the supplemental evidence files,
	// in the order they were read.
	Supplemental []string
}

// Verdict is the classification: the typed cleanup report release takes and
// the rule that produced it.
type Verdict struct {
	Report lockstate.Report
	Rule   Rule
}

// Safe reports whether the verdict proves the seat clean
// (confirmed/healthy/cleanup-confirmed): the classifier's resource-safe.
func (v Verdict) Safe() bool {
	return v.Report.Status == lockstate.StatusConfirmed && v.Report.Health == lockstate.HealthHealthy &&
		v.Report.Reason == lockstate.ReasonCleanupConfirmed
}

// Default is the verdict written before anything is read, so a failure at
// any later point leaves an unknown report: unknown/healthy/
// return-log-truncated (facts §3 "defaults first").
func Default() Verdict {
	return unknown(Rule{2, ruleNameCaptureIncomplete}, ReasonReturnLogTruncated)
}

func unknown(r Rule, reason string) Verdict {
	return Verdict{Report: lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthHealthy, Reason: reason}, Rule: r}
}

// Classify applies the nine rules of reference-behavior.md §1.10 in order;
// the first that matches decides:
//
//  1. 20111 in the return log or any supplemental file → unknown/blocked/
//     unity-account-limit-20111, when at least one occurrence is a whole
//     number (see WholeNumber); an occurrence the contract's digit-bounded
//     pattern matches only inside a longer token (A20111, 0x20111) gives
//     unknown/healthy/cleanup-evidence-unknown instead: the seat is
//     quarantined, but no organization-wide incident is raised on it.
//  2. Capture incomplete → return-log-truncated.
//  3. 400006 anywhere → unity-return-400006.
//  4. Completed with exit code 137, 143, -1073741510 or -1073740791 →
//     return-terminated.
//  5. Completed with exit code 124 (the return action's own timer) →
//     return-timeout.
//  6. 20113 anywhere → unity-20113-unclassified.
//  7. A "Serial number unavailable for ULF return" line in the return log →
//     return-ulf-skipped.
//  8. Completed, with an exact entitlement-returned line and a ULF-returned
//     line in the return log → confirmed/healthy/cleanup-confirmed.
//  9. Otherwise → return-missing-positive-evidence.
//
// The numeric markers are searched in the return log and every supplemental
// text joined with "\n"; the line rules look only at the return log, each
// line with every "\r" removed and trimmed as JavaScript's String.trim does.
func Classify(in Input) Verdict {
	all := strings.Join(append([]string{in.ReturnLog}, in.Supplemental...), "\n")
	switch {
	case hasMarker(all, "20111", marker20111) && hasWholeNumber(all, "20111"):
		return Verdict{Report: lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthBlocked, Reason: ReasonAccountLimit},
			Rule: Rule{1, ruleNameAccountLimit}}
	case hasMarker(all, "20111", marker20111):
		// The contract's pattern matches, but only inside a longer token
		// (A20111, 0x20111, ERR_20111, 0.20111): not the account-limit
		// code as Unity prints it. The seat is not proven clean, but the
		// organization-wide incident is not raised on it.
		return unknown(Rule{1, ruleNameAmbiguous20111}, lockstate.ReasonCleanupEvidenceUnknown)
	case !in.CaptureComplete:
		return unknown(Rule{2, ruleNameCaptureIncomplete}, ReasonReturnLogTruncated)
	case hasMarker(all, "400006", marker400006):
		return unknown(Rule{3, ruleNameReturn400006}, ReasonReturn400006)
	case in.Completed && slices.Contains(TerminatedExitCodes, in.ExitCode):
		return unknown(Rule{4, ruleNameTerminated}, ReasonReturnTerminated)
	case in.Completed && in.ExitCode == TimeoutExitCode:
		return unknown(Rule{5, ruleNameTimeout}, ReasonReturnTimeout)
	case hasMarker(all, "20113", marker20113):
		return unknown(Rule{6, ruleName20113}, Reason20113Unclassified)
	}
	var entitlement, ulfReturned, ulfSkipped bool
	for _, line := range strings.Split(in.ReturnLog, "\n") {
		line = jsstr.Trim(strings.ReplaceAll(line, "\r", ""))
		switch {
		case line == entitlementLine || line == entitlementLineModule:
			entitlement = true
		case !strings.Contains(line, "ULF"):
			// Both ULF patterns contain the literal; most lines do not.
		case ulfSkippedRE.MatchString(line):
			ulfSkipped = true
		case ulfReturnedRE.MatchString(line):
			ulfReturned = true
		}
	}
	switch {
	case ulfSkipped:
		return unknown(Rule{7, ruleNameULFSkipped}, ReasonReturnULFSkipped)
	case in.Completed && entitlement && ulfReturned:
		return Verdict{Report: lockstate.Report{Status: lockstate.StatusConfirmed, Health: lockstate.HealthHealthy, Reason: ReasonCleanupConfirmed},
			Rule: Rule{8, ruleNameConfirmed}}
	}
	return unknown(Rule{9, ruleNameMissingPositive}, ReasonMissingPositiveEvidence)
}

// hasWholeNumber reports whether literal occurs in text as a whole number
// (WholeNumber).
func hasWholeNumber(text, literal string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], literal)
		if j < 0 {
			return false
		}
		if WholeNumber(text, i+j, i+j+len(literal)) {
			return true
		}
		i += j + 1
	}
}

// WholeNumber reports whether the digits text[start:end] stand as a whole
// number: the code point before them and the one after are neither a
// letter, a digit nor an underscore, and they are not part of a decimal
// number (a dot with a digit beyond it on either side). "code 20111",
// "(20111)" and "20111:" are whole; "A20111", "0x20111", "ERR_20111",
// "0.20111" and "20111.5" are not.
func WholeNumber(text string, start, end int) bool {
	before, n := utf8.DecodeLastRuneInString(text[:start])
	if start > 0 {
		if isWordRune(before) {
			return false
		}
		if before == '.' {
			if d, _ := utf8.DecodeLastRuneInString(text[:start-n]); start-n > 0 && unicode.IsDigit(d) {
				return false
			}
		}
	}
	if end < len(text) {
		after, m := utf8.DecodeRuneInString(text[end:])
		if isWordRune(after) {
			return false
		}
		if after == '.' {
			if d, _ := utf8.DecodeRuneInString(text[end+m:]); end+m < len(text) && unicode.IsDigit(d) {
				return false
			}
		}
	}
	return true
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// hasMarker reports whether re matches text; re requires literal, so a
// text without it is decided by a fast substring search (logs reach 25 MiB).
func hasMarker(text, literal string, re *regexp.Regexp) bool {
	return strings.Contains(text, literal) && re.MatchString(text)
}
