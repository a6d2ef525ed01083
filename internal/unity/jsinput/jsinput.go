// Package jsinput reads the inputs of the Unity actions as the reference
// reads them: trimmed with JavaScript's String.prototype.trim
// (internal/jsstr), not with strings.TrimSpace, which trims U+0085 and
// keeps U+FEFF. It is the one place the Unity actions trim an input.
//
// The value parsers (Value, RequiredValue, PatternValue) take the raw
// value a settings constructor read; Input, Required and Pattern are the
// same parsers over an actionio.IO for the callers that still read their
// inputs through one.
package jsinput

import (
	"fmt"
	"regexp"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
)

// Input returns input name trimmed as JavaScript trims, "" when absent.
func Input(a *actionio.IO, name string) string { return jsstr.Trim(a.RawInput(name)) }

// Value returns a raw input or variable value trimmed as JavaScript trims.
func Value(raw string) string { return jsstr.Trim(raw) }

// Required returns Input(name), or an *actionio.InputError with
// actionio.CodeRequired when it is empty after trimming.
func Required(a *actionio.IO, name string) (string, error) {
	return RequiredValue(name, a.RawInput(name))
}

// RequiredValue is Required over the raw value of input name.
func RequiredValue(name, raw string) (string, error) {
	v := Value(raw)
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
	return PatternValue(name, a.RawInput(name), def, re)
}

// PatternValue is Pattern over the raw value of input name.
func PatternValue(name, raw, def string, re *regexp.Regexp) (string, error) {
	v := Value(raw)
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
