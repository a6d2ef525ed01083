// Package jsstr reproduces the JavaScript string functions the reference
// implementation's decisions rest on, so a Go port decides the same way on
// the same input: String.prototype.trim (whose whitespace set differs from
// strings.TrimSpace) and String.prototype.toLowerCase (whose full case
// mapping differs from strings.ToLower).
//
// It is a leaf: it imports nothing from the project, so any package may use
// it. internal/lockstate keeps its own private copy of the trim rule, since
// it imports nothing from the project by design.
package jsstr

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsSpace reports whether r is one of the code points
// String.prototype.trim removes: ECMAScript WhiteSpace (TAB, VT, FF, SP,
// NBSP, ZWNBSP U+FEFF and every Zs) and LineTerminator (LF, CR, U+2028,
// U+2029). Unlike unicode.IsSpace it includes U+FEFF and excludes U+0085
// (NEL), which ECMAScript does not treat as whitespace.
// https://tc39.es/ecma262/#sec-white-space
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\ufeff', '\u2028', '\u2029':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// Trim returns s without leading and trailing IsSpace code points, as
// String.prototype.trim does.
func Trim(s string) string { return strings.TrimFunc(s, IsSpace) }

// HasEdgeSpace reports whether Trim would change s.
func HasEdgeSpace(s string) bool { return Trim(s) != s }

// Code points whose JavaScript lowercase differs from Go's simple mapping.
const (
	capitalIWithDotAbove = '\u0130'
	capitalSigma         = '\u03a3'
	finalSigma           = '\u03c2'
	smallSigma           = '\u03c3'
)

// ToLower returns s lowercased as String.prototype.toLowerCase does: the
// full Unicode case mapping, which differs from strings.ToLower's simple
// mapping in two places. U+0130 (İ) becomes "i̇" (U+0069 U+0307), not "i"
// (SpecialCasing.txt's one unconditional lowercase entry), and a capital
// sigma at the end of a word becomes the final form ς (the Final_Sigma
// condition of the Unicode Standard, §3.13, which ECMAScript applies).
// Every other code point maps as strings.ToLower maps it, within the
// Unicode version Go's unicode package implements. Invalid UTF-8 bytes are
// kept as they are.
// https://tc39.es/ecma262/#sec-string.prototype.tolowercase
func ToLower(s string) string {
	if !strings.ContainsRune(s, capitalIWithDotAbove) && !strings.ContainsRune(s, capitalSigma) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteByte(s[i])
		case r == capitalIWithDotAbove:
			b.WriteString("i\u0307")
		case r == capitalSigma && isFinalSigma(s, i, n):
			b.WriteRune(finalSigma)
		case r == capitalSigma:
			b.WriteRune(smallSigma)
		default:
			b.WriteString(strings.ToLower(s[i : i+n]))
		}
		i += n
	}
	return b.String()
}

// isFinalSigma applies Final_Sigma to the sigma at s[i:i+n]: it is preceded
// by a cased letter (skipping case-ignorable code points) and not followed
// by one (skipping case-ignorable code points).
func isFinalSigma(s string, i, n int) bool {
	before := false
	for j := i; j > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
		if isCaseIgnorable(r) {
			continue
		}
		before = isCased(r)
		break
	}
	if !before {
		return false
	}
	for j := i + n; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		if isCaseIgnorable(r) {
			continue
		}
		return !isCased(r)
	}
	return true
}

// isCased is the Unicode Cased property: Lowercase, Uppercase or Lt.
func isCased(r rune) bool {
	return unicode.IsLower(r) || unicode.IsUpper(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// isCaseIgnorable is the Unicode Case_Ignorable property: Mn, Me, Cf, Lm,
// Sk, and the Word_Break classes MidLetter, MidNumLet and Single_Quote.
func isCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '\u00b7', '\u0387', '\u055f', '\u05f4', '\u2018', '\u2019', '\u2024', '\u2027',
		'\ufe13', '\ufe52', '\ufe55', '\uff07', '\uff0e', '\uff1a':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
