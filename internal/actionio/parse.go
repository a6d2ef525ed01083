package actionio

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Codes carried by [InputError.Code]. They are stable strings suitable for
// outputs and tests.
const (
	CodeRequired             = "required"
	CodeInvalidBoolean       = "invalid-boolean"
	CodeInvalidPositiveInt   = "invalid-positive-integer"
	CodeInvalidNonNegInt     = "invalid-non-negative-integer"
	CodePatternMismatch      = "pattern-mismatch"
	CodeEdgeWhitespaceOrLine = "edge-whitespace-or-newline"
	CodeControlCharacter     = "control-character"
	CodeTooLong              = "too-long"
)

// InputError reports an input that violates its rule. Message names the rule
// and never contains the rejected value, because inputs may carry secrets.
type InputError struct {
	Input   string // input name as declared in action.yml, e.g. "lock-name"
	Code    string // one of the Code* constants
	Message string // the rule, e.g. "must be true or false"
}

// Error implements error as "input <name>: <rule>".
func (e *InputError) Error() string {
	return fmt.Sprintf("input %s: %s", e.Input, e.Message)
}

// digitsOnly matches the reference's integer grammar (BL 109-119, 255-268):
// ASCII digits, nothing else (no sign, no spaces inside).
var digitsOnly = regexp.MustCompile(`^[0-9]+$`)

// Required returns the trimmed value of input name, or an *InputError with
// CodeRequired when it is absent or blank.
func (a *IO) Required(name string) (string, error) {
	v := a.Input(name)
	if v == "" {
		return "", &InputError{Input: name, Code: CodeRequired, Message: "is required"}
	}
	return v, nil
}

// Bool parses input name as a boolean: trimmed, case-insensitive "true" or
// "false" (spec §1.2 booleanInput). An absent input yields def.
func (a *IO) Bool(name string, def bool) (bool, error) {
	v := a.Input(name)
	if v == "" {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &InputError{Input: name, Code: CodeInvalidBoolean, Message: "must be true or false"}
}

// PositiveInt parses input name as digits only with value ≥ 1 (spec §1.2
// integerInput). An absent input yields def.
func (a *IO) PositiveInt(name string, def int) (int, error) {
	v := a.Input(name)
	if v == "" {
		return def, nil
	}
	n, ok := parseDigits(v)
	if !ok || n < 1 {
		return 0, &InputError{Input: name, Code: CodeInvalidPositiveInt, Message: "must be a positive integer (digits only, at least 1)"}
	}
	return n, nil
}

// PositiveIntMax is PositiveInt with an upper bound, for inputs that become
// durations: an unbounded value would overflow time.Duration arithmetic.
func (a *IO) PositiveIntMax(name string, def, maxVal int) (int, error) {
	n, err := a.PositiveInt(name, def)
	if err != nil {
		return 0, err
	}
	if n > maxVal {
		return 0, &InputError{Input: name, Code: CodeInvalidPositiveInt, Message: fmt.Sprintf("must be a positive integer no greater than %d", maxVal)}
	}
	return n, nil
}

// NonNegativeIntMax parses input name as digits only with 0 ≤ value ≤ maxVal
// (spec §1.2 nonNegativeIntegerInput). An absent input yields def.
func (a *IO) NonNegativeIntMax(name string, def, maxVal int) (int, error) {
	v := a.Input(name)
	if v == "" {
		return def, nil
	}
	n, ok := parseDigits(v)
	if !ok || n > maxVal {
		return 0, &InputError{Input: name, Code: CodeInvalidNonNegInt, Message: fmt.Sprintf("must be a non-negative integer no greater than %d (digits only)", maxVal)}
	}
	return n, nil
}

// Pattern returns the trimmed value of input name (def when absent) if it
// matches re. An empty effective value that re does not accept is reported
// with CodeRequired; any other mismatch with CodePatternMismatch. The message
// quotes the pattern, never the value.
func (a *IO) Pattern(name, def string, re *regexp.Regexp) (string, error) {
	v := a.Input(name)
	if v == "" {
		v = def
	}
	if re.MatchString(v) {
		return v, nil
	}
	if v == "" {
		return "", &InputError{Input: name, Code: CodeRequired, Message: "is required"}
	}
	return "", &InputError{Input: name, Code: CodePatternMismatch, Message: fmt.Sprintf("must match %s", re.String())}
}

// NoEdgeWhitespaceNoNewline returns the raw (untrimmed) value of input name,
// def when absent, refusing leading or trailing whitespace and any CR or LF
// (spec §1.2 holder-id-suffix, BL 270-276). Internal spaces are allowed.
// An input consisting only of whitespace is refused rather than treated as
// absent.
func (a *IO) NoEdgeWhitespaceNoNewline(name, def string) (string, error) {
	raw := a.RawInput(name)
	if raw == "" {
		return def, nil
	}
	if strings.ContainsAny(raw, "\r\n") || strings.TrimSpace(raw) != raw {
		return "", &InputError{Input: name, Code: CodeEdgeWhitespaceOrLine, Message: "must not have leading or trailing whitespace or contain a line break"}
	}
	return raw, nil
}

// Tolerant is the result of a tolerant integer knob such as
// release-retry-deadline-seconds (spec §1.4): a bad value never fails the
// step, it produces a Warning and falls back to the default.
type Tolerant struct {
	Value   int    // the parsed value, or the default
	Set     bool   // true when the input was present and accepted
	Warning string // non-empty when a present value was rejected; never contains the value
}

// IntInRangeTolerant parses input name as digits only within [lo, hi] or
// equal to one of extra (e.g. 0 for "disabled"). Absent → {def, false, ""}.
// Present but invalid → {def, false, warning}. It never returns an error:
// release must reach its exact cleanup whatever the knobs say.
func (a *IO) IntInRangeTolerant(name string, def, lo, hi int, extra ...int) Tolerant {
	v := a.Input(name)
	if v == "" {
		return Tolerant{Value: def}
	}
	if n, ok := parseDigits(v); ok {
		if n >= lo && n <= hi {
			return Tolerant{Value: n, Set: true}
		}
		for _, e := range extra {
			if n == e {
				return Tolerant{Value: n, Set: true}
			}
		}
	}
	allowed := fmt.Sprintf("%d-%d", lo, hi)
	for _, e := range extra {
		allowed += fmt.Sprintf(" or %d", e)
	}
	return Tolerant{Value: def, Warning: fmt.Sprintf("input %s must be an integer in %s; using %d", name, allowed, def)}
}

// parseDigits accepts only ASCII digits and values that fit in an int.
func parseDigits(v string) (int, bool) {
	if !digitsOnly.MatchString(v) {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, false
	}
	return n, true
}

// Identifier returns input name (def when absent) for a value that becomes
// part of an identity or an output: the raw value must have no leading or
// trailing whitespace (when trim is false; with trim it is trimmed first),
// no control character (line breaks, tabs, escape sequences, DEL), nothing
// that contains the file-command delimiter, and at most maxBytes bytes.
// Internal spaces are allowed. It is how holder-id-suffix and runner-id are
// read, so a value that could break a workflow command or an output is
// refused before any request is sent.
func (a *IO) Identifier(name, def string, maxBytes int, trim bool) (string, error) {
	raw := a.RawInput(name)
	if trim {
		raw = strings.TrimSpace(raw)
	}
	if raw == "" {
		return def, nil
	}
	if strings.TrimSpace(raw) != raw {
		return "", &InputError{Input: name, Code: CodeEdgeWhitespaceOrLine, Message: "must not have leading or trailing whitespace or contain a line break"}
	}
	if strings.IndexFunc(raw, unicode.IsControl) >= 0 {
		code, msg := CodeControlCharacter, "must not contain control characters (line breaks, tabs, escape sequences)"
		if strings.ContainsAny(raw, "\r\n") {
			code, msg = CodeEdgeWhitespaceOrLine, "must not have leading or trailing whitespace or contain a line break"
		}
		return "", &InputError{Input: name, Code: code, Message: msg}
	}
	if strings.Contains(raw, fileCommandDelimiter) {
		return "", &InputError{Input: name, Code: CodePatternMismatch, Message: "must not contain the runner's file-command delimiter"}
	}
	if len(raw) > maxBytes {
		return "", &InputError{Input: name, Code: CodeTooLong, Message: fmt.Sprintf("must be at most %d bytes", maxBytes)}
	}
	return raw, nil
}
