package lockstate

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// This file holds the small pieces of JavaScript semantics the reference
// relies on: String() coercion, String.prototype.trim, Date.parse and
// Date.prototype.toISOString. They decide byte compatibility with the
// reference client that shares the state file.

// jsString mirrors String(value) for a value produced by encoding/json with
// UseNumber, except that null and a missing key become "" (assumption: the
// reference coerces with `String(value ?? "")`).
func jsString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case json.Number:
		return jsNumberString(string(x))
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if e != nil {
				parts[i] = jsString(e)
			}
		}
		return strings.Join(parts, ",")
	case map[string]any:
		return "[object Object]"
	default:
		return ""
	}
}

// jsTruthy mirrors JavaScript truthiness for a decoded JSON value.
func jsTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case bool:
		return x
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !math.IsInf(f, 0) {
			return true
		}
		return f != 0
	default:
		return true
	}
}

// jsNumberString formats a JSON number literal the way ECMAScript
// Number::toString does (shortest round-trip digits, exponent outside
// 1e-7..1e21).
func jsNumberString(literal string) string {
	f, err := strconv.ParseFloat(literal, 64)
	if err != nil && !math.IsInf(f, 0) {
		return literal
	}
	return jsFormatFloat(f)
}

func jsFormatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	case f == 0:
		return "0"
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	// Shortest digits d1d2...dk and exponent such that value = 0.d1..dk × 10^n.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expPart, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expPart)
	k := len(digits)
	n := exp + 1
	var out string
	switch {
	case k <= n && n <= 21:
		out = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		out = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		out = "0." + strings.Repeat("0", -n) + digits
	default:
		expSign := "+"
		if n-1 < 0 {
			expSign = "-"
		}
		absExp := n - 1
		if absExp < 0 {
			absExp = -absExp
		}
		if k == 1 {
			out = digits + "e" + expSign + strconv.Itoa(absExp)
		} else {
			out = digits[:1] + "." + digits[1:] + "e" + expSign + strconv.Itoa(absExp)
		}
	}
	return sign + out
}

// jsIsSpace reports whether r is WhiteSpace or LineTerminator for
// String.prototype.trim. Unlike unicode.IsSpace it includes U+FEFF and
// excludes U+0085.
func jsIsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\ufeff', '\u2028', '\u2029':
		return true
	case '\u0085':
		return false
	}
	return unicode.Is(unicode.Zs, r)
}

// jsTrim mirrors String.prototype.trim.
func jsTrim(s string) string {
	return strings.TrimFunc(s, jsIsSpace)
}

// isCanonicalPositiveDecimal reports whether s matches ^[1-9][0-9]*$.
func isCanonicalPositiveDecimal(s string) bool {
	if s == "" || s[0] < '1' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// compareDecimal compares two canonical positive decimals numerically.
func compareDecimal(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// isoLayout is the layout of Date.prototype.toISOString.
const isoLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t like JavaScript Date.prototype.toISOString: UTC with
// exactly three fractional digits ("2006-01-02T15:04:05.000Z"). Sub-millisecond
// precision is truncated, as a JS Date cannot carry it.
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Millisecond).Format(isoLayout)
}

// parseLayouts are the ISO 8601 shapes accepted by ParseTime. Date-time forms
// without an offset are read as UTC (assumption: JavaScript would use the
// runner's local zone; the reference itself only writes toISOString output).
var parseLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02",
	"2006-01",
	"2006",
}

// ParseTime parses the ISO 8601 subset of JavaScript Date.parse that the
// reference writes and validates (createdAt, availableAt, reportedAt,
// expiresAt). The result is truncated to milliseconds like a JS Date.
func ParseTime(s string) (time.Time, bool) {
	if s == "" || strings.ContainsAny(s, " \t\n") {
		return time.Time{}, false
	}
	for _, layout := range parseLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Truncate(time.Millisecond), true
		}
	}
	return time.Time{}, false
}
