// Package jsinput reads the inputs of the Unity actions as the reference
// reads them: trimmed with JavaScript's String.prototype.trim
// (internal/jsstr), not with strings.TrimSpace, which trims U+0085 and
// keeps U+FEFF. It is the one place the Unity actions trim an input.
package jsinput

import (
	"fmt"
	"regexp"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
)

// Input returns input name trimmed as JavaScript trims, "" when absent.
func Input(a *actionio.IO, name string) string { return jsstr.Trim(a.RawInput(name)) }

// Env returns the environment variable key trimmed as JavaScript trims.
func Env(a *actionio.IO, key string) string { return jsstr.Trim(a.Getenv(key)) }

// Required returns Input(name), or an *actionio.InputError with
// actionio.CodeRequired when it is empty after trimming.
func Required(a *actionio.IO, name string) (string, error) {
	v := Input(a, name)
	if v == "" {
		return "", &actionio.InputError{Input: name, Code: actionio.CodeRequired, Message: "is required"}
	}
	return v, nil
}

// Pattern returns Input(name), def when empty, if re matches it. An empty
// effective value re refuses is actionio.CodeRequired, any other mismatch
// actionio.CodePatternMismatch; the message quotes the pattern, never the
// value.
func Pattern(a *actionio.IO, name, def string, re *regexp.Regexp) (string, error) {
	v := Input(a, name)
	if v == "" {
		v = def
	}
	if re.MatchString(v) {
		return v, nil
	}
	if v == "" {
		return "", &actionio.InputError{Input: name, Code: actionio.CodeRequired, Message: "is required"}
	}
	return "", &actionio.InputError{Input: name, Code: actionio.CodePatternMismatch, Message: fmt.Sprintf("must match %s", re.String())}
}
