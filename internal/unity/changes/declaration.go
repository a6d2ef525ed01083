package changes

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
)

// Bounds of the independent-paths declaration.
const (
	// MaxDeclarationBytes bounds the raw input.
	MaxDeclarationBytes = 64 << 10
	// MaxDeclaredPaths bounds the distinct entries.
	MaxDeclaredPaths = 256
)

// ProtectedPrefixes are the directories a declaration may never cover nor
// sit inside: the Unity project itself and the workflows that decide what
// runs (unity-lifecycle-facts.md §5). The comparison is case-sensitive, as
// git paths are.
var ProtectedPrefixes = []string{"Assets/", "Packages/", "ProjectSettings/", ".github/workflows/"}

// declaredRE is the reference's grammar: one or more directory segments of
// [A-Za-z0-9._-], then "**".
var declaredRE = regexp.MustCompile(`^(?:[A-Za-z0-9._-]+/)+\*\*$`)

// Stable codes of a [DeclarationError].
const (
	CodeDeclarationTooLarge   = "independent-paths-too-large"
	CodeDeclarationTooMany    = "independent-paths-too-many"
	CodeDeclarationPattern    = "independent-path-pattern"
	CodeDeclarationDotSegment = "independent-path-dot-segment"
	CodeDeclarationOverlap    = "independent-path-overlaps-protected"
)

// DeclarationError reports an independent-paths entry that breaks a rule.
// Line is the 1-based line of the input (0 for the whole input); Entry is
// the offending entry, quoted and bounded for a log line.
type DeclarationError struct {
	Code    string
	Line    int
	Entry   string
	Message string
}

// Error implements error.
func (e *DeclarationError) Error() string {
	if e.Line == 0 {
		return "input independent-paths: " + e.Message
	}
	return fmt.Sprintf("input independent-paths line %d (%s): %s", e.Line, e.Entry, e.Message)
}

// ParseIndependentPaths parses the newline-separated independent-paths
// declaration into directory prefixes ("docs/**" → "docs/"). Lines are
// trimmed (so CRLF input works), blank lines skipped and duplicates
// dropped. Every entry must match ^(?:[A-Za-z0-9._-]+/)+\*\*$, have no "."
// or ".." segment, and neither cover nor sit inside a protected prefix
// (Assets/, Packages/, ProjectSettings/, .github/workflows/): ".github/**"
// is refused because it contains .github/workflows/. The first violation is
// returned, naming its line.
func ParseIndependentPaths(raw string) ([]string, error) {
	if len(raw) > MaxDeclarationBytes {
		return nil, &DeclarationError{Code: CodeDeclarationTooLarge, Message: fmt.Sprintf("is longer than %d bytes", MaxDeclarationBytes)}
	}
	var out []string
	seen := map[string]bool{}
	for i, line := range strings.Split(raw, "\n") {
		entry := jsstr.Trim(line)
		if entry == "" {
			continue
		}
		n := i + 1
		if !declaredRE.MatchString(entry) {
			return nil, &DeclarationError{Code: CodeDeclarationPattern, Line: n, Entry: quote(entry),
				Message: `must be a directory followed by "/**" (segments of A-Z a-z 0-9 . _ -), e.g. docs/**`}
		}
		prefix := strings.TrimSuffix(entry, "**")
		for _, seg := range strings.Split(strings.TrimSuffix(prefix, "/"), "/") {
			if seg == "." || seg == ".." {
				return nil, &DeclarationError{Code: CodeDeclarationDotSegment, Line: n, Entry: quote(entry), Message: `must not contain a "." or ".." segment`}
			}
		}
		for _, p := range ProtectedPrefixes {
			if strings.HasPrefix(prefix, p) || strings.HasPrefix(p, prefix) {
				return nil, &DeclarationError{Code: CodeDeclarationOverlap, Line: n, Entry: quote(entry),
					Message: fmt.Sprintf("overlaps %s, which always requires Unity", p)}
			}
		}
		if seen[prefix] {
			continue
		}
		seen[prefix] = true
		if len(out) == MaxDeclaredPaths {
			return nil, &DeclarationError{Code: CodeDeclarationTooMany, Line: n, Entry: quote(entry), Message: fmt.Sprintf("more than %d distinct entries", MaxDeclaredPaths)}
		}
		out = append(out, prefix)
	}
	return out, nil
}

// quote renders an entry for an error message: Go-quoted (so a newline or
// a workflow command cannot break the line) and cut at 120 bytes.
func quote(s string) string {
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return strconv.Quote(s)
}

// ReasonCode returns Code (the ::error title and job summary code).
func (e *DeclarationError) ReasonCode() string { return e.Code }
