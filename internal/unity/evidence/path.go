package evidence

import (
	"regexp"
	"strings"
)

// Evidence layout (facts §2):
// <RUNNER_TEMP>/unity-return-<run id>-<run attempt>-<suffix>/return-license.log.
const (
	// LogFileName is the one file of an evidence directory.
	LogFileName = "return-license.log"
	// DirPrefix starts every evidence directory name.
	DirPrefix = "unity-return-"
	// ClaimInfix joins an evidence directory and the classifier's nonce once
	// claimed: <dir>.consuming-<32 lowercase hex>.
	ClaimInfix = ".consuming-"
	// DefaultSuffix is the evidence-suffix default.
	DefaultSuffix = "default"
)

var (
	runNumberRE = regexp.MustCompile(`^[1-9][0-9]*$`)
	suffixRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	nonceRE     = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// SuffixPattern is the evidence-suffix rule, for messages.
const SuffixPattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`

// ValidRunNumber reports whether s is a GITHUB_RUN_ID or GITHUB_RUN_ATTEMPT
// the evidence path may carry: ^[1-9][0-9]*$.
func ValidRunNumber(s string) bool { return runNumberRE.MatchString(s) }

// ValidSuffix reports whether s is a valid evidence-suffix.
func ValidSuffix(s string) bool { return suffixRE.MatchString(s) }

// DirName returns the evidence directory name of one return step.
func DirName(runID, runAttempt, suffix string) string {
	return DirPrefix + runID + "-" + runAttempt + "-" + suffix
}

// ParseDirName reports whether name is the evidence directory name of run
// runID attempt runAttempt with a valid suffix, and returns the suffix.
func ParseDirName(name, runID, runAttempt string) (string, bool) {
	suffix, ok := strings.CutPrefix(name, DirPrefix+runID+"-"+runAttempt+"-")
	if !ok || !ValidSuffix(suffix) {
		return "", false
	}
	return suffix, true
}

// ClaimedName returns the name a claimed evidence directory is renamed to.
func ClaimedName(dirName, nonce string) string { return dirName + ClaimInfix + nonce }

// ValidNonce reports whether s is a claim nonce (32 lowercase hex).
func ValidNonce(s string) bool { return nonceRE.MatchString(s) }
