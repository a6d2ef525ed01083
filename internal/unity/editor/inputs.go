package editor

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
)

var lineSplitRE = regexp.MustCompile(`\r?\n`)

// PayloadError names the line of required-editor-payload-relative-path
// that broke a rule.
type PayloadError struct {
	Line int
	Rule string
}

// ReasonCode is the refusal code of every payload-list rule.
func (e *PayloadError) ReasonCode() string { return "editor-payload-list-invalid" }

// Error implements error.
func (e *PayloadError) Error() string {
	return fmt.Sprintf("required-editor-payload-relative-path line %d: %s", e.Line, e.Rule)
}

// ParsePayloadList parses required-editor-payload-relative-path (facts §4):
// one trailing newline is stripped, the rest is split on \r?\n; no entry may
// be blank or padded, absolute (/x, \x, C:x, \\server), or contain a "." or
// ".." segment or an empty one, or NUL; duplicates are compared
// case-insensitively with / and \ equal. Entries come back slash-separated.
func ParsePayloadList(raw string) ([]string, error) {
	if raw == "" {
		return nil, nil
	}
	raw = strings.TrimSuffix(raw, "\n")
	raw = strings.TrimSuffix(raw, "\r")
	seen := map[string]int{}
	var out []string
	for i, line := range lineSplitRE.Split(raw, -1) {
		n := i + 1
		switch {
		case jsstr.Trim(line) == "":
			return nil, &PayloadError{n, "blank entry"}
		case jsstr.HasEdgeSpace(line):
			return nil, &PayloadError{n, "leading or trailing whitespace"}
		case strings.ContainsAny(line, "\x00\r"):
			return nil, &PayloadError{n, "contains NUL or a carriage return"}
		case line[0] == '/' || line[0] == '\\' || (len(line) >= 2 && line[1] == ':'):
			return nil, &PayloadError{n, "absolute paths are not allowed; give a path relative to the editor directory"}
		}
		norm := strings.ReplaceAll(line, `\`, "/")
		for _, seg := range strings.Split(norm, "/") {
			switch seg {
			case "..":
				return nil, &PayloadError{n, `".." segments are not allowed`}
			case ".", "":
				return nil, &PayloadError{n, `empty or "." segments are not allowed`}
			}
		}
		key := jsstr.ToLower(norm)
		if first, dup := seen[key]; dup {
			return nil, &PayloadError{n, fmt.Sprintf("duplicate of line %d", first)}
		}
		seen[key] = n
		out = append(out, norm)
	}
	return out, nil
}
