package changes

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
)

// PullRequestEvent is the only event whose changes are classified
// (unity-lifecycle-facts.md §5: the event must be exactly pull_request).
const PullRequestEvent = "pull_request"

// The central Unity-independent allowlist (unity-lifecycle-facts.md §5).
var (
	// AllowedFiles are exact paths.
	AllowedFiles = []string{".cursorrules", ".github/copilot-instructions.md", ".github/dependency-ownership.md"}
	// AllowedPrefixes are directory prefixes.
	AllowedPrefixes = []string{".github/ISSUE_TEMPLATE/", ".llm/", "progress/"}
)

// Stable reason codes of a [Decision].
const (
	// ReasonNotPullRequest: the event is not pull_request.
	ReasonNotPullRequest = "not-a-pull-request"
	// ReasonEmptyDiff: git reported no changed path.
	ReasonEmptyDiff = "empty-diff"
	// ReasonUnityPath: a changed path is outside the allowlist and the
	// declared prefixes.
	ReasonUnityPath = "unity-dependent-path"
	// ReasonIndependent: every changed path is Unity-independent.
	ReasonIndependent = "all-paths-unity-independent"
)

// Decision is the classifier's verdict.
type Decision struct {
	// UnityRequired is false only when every changed path is independent.
	UnityRequired bool
	// Reason is one of the Reason* codes.
	Reason string
	// ForcedBy is the first changed path (in git's order) that required
	// Unity, for ReasonUnityPath.
	ForcedBy string
	// Paths is the number of changed paths classified.
	Paths int
	// Via says how Unity reads ForcedBy, for ReasonUnityVisible.
	Via string
	// Unsure says why visibility was not decided, for
	// ReasonVisibilityUnknown.
	Unsure string
}

// NotPullRequest is the decision for any event other than pull_request.
func NotPullRequest() Decision {
	return Decision{UnityRequired: true, Reason: ReasonNotPullRequest}
}

// Independent reports whether one changed path is Unity-independent: a
// root-level *.md file, an allowlisted file or prefix, or a path under a
// declared prefix.
func Independent(path string, declared []string) bool {
	if !strings.Contains(path, "/") && strings.HasSuffix(path, ".md") && len(path) > len(".md") {
		return true
	}
	if slices.Contains(AllowedFiles, path) {
		return true
	}
	for _, p := range AllowedPrefixes {
		if strings.HasPrefix(path, p) && len(path) > len(p) {
			return true
		}
	}
	for _, p := range declared {
		if strings.HasPrefix(path, p) && len(path) > len(p) {
			return true
		}
	}
	return false
}

// Classify decides for the changed paths of a pull request, in git's order.
// An empty list requires Unity (nothing proves the change is harmless).
func Classify(paths, declared []string) Decision {
	if len(paths) == 0 {
		return Decision{UnityRequired: true, Reason: ReasonEmptyDiff}
	}
	for _, p := range paths {
		if !Independent(p, declared) {
			return Decision{UnityRequired: true, Reason: ReasonUnityPath, ForcedBy: p, Paths: len(paths)}
		}
	}
	return Decision{UnityRequired: false, Reason: ReasonIndependent, Paths: len(paths)}
}

// ErrMalformedPathList reports git output that is not a NUL-terminated
// list of non-empty paths.
var ErrMalformedPathList = errors.New("git reported a malformed path list (expected NUL-terminated, non-empty paths)")

// ParseNULPaths decodes the output of git diff --name-only -z: every path
// is terminated by a NUL. Empty output is an empty list. Output that does
// not end in NUL, or holds an empty path, is malformed.
func ParseNULPaths(out []byte) ([]string, error) {
	if len(out) == 0 {
		return nil, nil
	}
	if out[len(out)-1] != 0 {
		return nil, ErrMalformedPathList
	}
	parts := bytes.Split(out[:len(out)-1], []byte{0})
	paths := make([]string, 0, len(parts))
	for _, p := range parts {
		if len(p) == 0 {
			return nil, ErrMalformedPathList
		}
		paths = append(paths, string(p))
	}
	return paths, nil
}

// DisplayPath renders a path for a log line or a summary cell: plain when
// it is printable UTF-8 without surrounding space, Go-quoted otherwise (a
// newline in a file name cannot start a workflow command), cut at 300
// bytes.
func DisplayPath(p string) string {
	if len(p) > 300 {
		p = p[:300] + "…"
	}
	plain := utf8.ValidString(p) && !jsstr.HasEdgeSpace(p) && !strings.ContainsFunc(p, func(r rune) bool {
		return !unicode.IsPrint(r) && r != ' '
	})
	if plain {
		return p
	}
	return strconv.Quote(p)
}
