package ghclient

import (
	"net/http"
	"strings"
)

// Codes of the write refusals that are not compare-and-swap conflicts.
const (
	// CodeBranchRules is the Code of an [*Error] for a write that a branch
	// rule refused (a ruleset or classic branch protection): no retry can
	// succeed until an administrator changes the rule.
	CodeBranchRules = "github-branch-rules"
	// CodeInvalidWrite is the Code of an [*Error] for a write GitHub found
	// invalid (a 422 that is neither a compare-and-swap conflict nor a rule
	// refusal): the request itself is wrong, and sending it again cannot
	// succeed.
	CodeInvalidWrite = "github-invalid-write"
)

// WriteRefusal says why GitHub answered a write with 409 or 422.
type WriteRefusal int

const (
	// RefusalConflict is a lost compare-and-swap race: the file's sha does
	// not match ("<path> does not match <sha>"), the branch moved while the
	// commit was made ("is at <sha> but expected <sha>"), the file appeared
	// meanwhile (422 "sha" wasn't supplied), or a reference already exists.
	// Re-reading and trying again can succeed.
	RefusalConflict WriteRefusal = iota
	// RefusalRules is a write refused by a branch rule: "Repository rule
	// violations found" (rulesets) or "Protected branch update failed"
	// (classic protection). Trying again cannot succeed.
	RefusalRules
	// RefusalInvalid is any other 422: the write is invalid as sent.
	RefusalInvalid
)

// String names r.
func (r WriteRefusal) String() string {
	switch r {
	case RefusalConflict:
		return "conflict"
	case RefusalRules:
		return "branch-rules"
	default:
		return "invalid"
	}
}

// ruleMarkers identify a rule refusal in GitHub's message. Rulesets answer
// "Repository rule violations found\n\n<violation>\n\n" (409 on the Contents
// API, 422 on the Git refs API; git prints the same text as GH013), classic
// protection "Protected branch update failed for refs/heads/<b>." (GH006)
// or, from a pre-receive hook, "protected branch hook declined". Sources:
// docs/emulator.md "Branch rules".
var ruleMarkers = []string{
	"repository rule violations found",
	"protected branch update failed",
	"protected branch hook declined",
	"changes must be made through a pull request",
	"cannot update this protected ref",
}

// conflictMarkers identify the 422s that are compare-and-swap conflicts: the
// file appeared after we read it absent ("sha" wasn't supplied), a branch
// or reference someone else created first, or a ref update a concurrent
// commit made non-fast-forward.
var conflictMarkers = []string{
	`"sha" wasn't supplied`,
	"sha wasn't supplied",
	"reference already exists",
	"update is not a fast forward",
}

// ClassifyWriteRefusal decides what a 409 or 422 answer to a write means
// from GitHub's message, never from the status alone: a rule refusal
// (either status), a compare-and-swap conflict (every other 409, and the
// 422s listed in conflictMarkers), or an invalid write (every other 422).
// Other statuses are RefusalInvalid.
func ClassifyWriteRefusal(status int, message string) WriteRefusal {
	if status != http.StatusConflict && status != http.StatusUnprocessableEntity {
		return RefusalInvalid
	}
	lower := strings.ToLower(message)
	for _, m := range ruleMarkers {
		if strings.Contains(lower, m) {
			return RefusalRules
		}
	}
	if status == http.StatusConflict {
		return RefusalConflict
	}
	for _, m := range conflictMarkers {
		if strings.Contains(lower, m) {
			return RefusalConflict
		}
	}
	return RefusalInvalid
}

// IsBranchRules reports whether err is a write refused by a branch rule
// (Code [CodeBranchRules]).
func IsBranchRules(err error) bool {
	e, ok := asError(err)
	return ok && e.Code == CodeBranchRules
}

// IsInvalidWrite reports whether err is a write GitHub found invalid (Code
// [CodeInvalidWrite]).
func IsInvalidWrite(err error) bool {
	e, ok := asError(err)
	return ok && e.Code == CodeInvalidWrite
}

// IsFileMoved reports a lost compare-and-swap whose answer says the file
// itself is no longer at the sent sha: GitHub's 409 "<path> does not match
// <sha>" (https://github.com/octokit/octokit.rb/issues/581, measured in
// https://github.com/pome-sh/digital-twins/pull/400). A 409 "is at <sha>
// but expected <sha>" only says the branch moved while the commit was
// made, which another file's write on the same branch does too.
func IsFileMoved(err error) bool {
	e, ok := asError(err)
	return ok && IsConflict(err) && strings.Contains(e.Message, " does not match ")
}
