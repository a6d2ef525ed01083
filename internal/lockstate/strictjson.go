package lockstate

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// StrictJSONError is a document that encoding/json would accept but that a
// reader must refuse because decoding it would silently change what it
// says: bytes that are not UTF-8 (encoding/json rewrites them to U+FFFD), a
// \u escape of a lone UTF-16 surrogate (also rewritten to U+FFFD, while the
// JavaScript reference writes it back as \udXXX), or an object that repeats
// a key (encoding/json keeps the last value, so {"maxHolders":1,
// "maxHolders":64} reads as 64 seats). Path locates the problem in
// JSONPath-like form ($.queue[3].holderId).
type StrictJSONError struct {
	Code   Code
	Path   string
	Detail string
}

func (e *StrictJSONError) Error() string {
	return fmt.Sprintf("%s at %s: %s", e.Code, e.Path, e.Detail)
}

// CheckStrictJSON reports the first reason data must be refused before it is
// decoded with encoding/json: invalid UTF-8 (CodeInvalidUTF8), a lone
// surrogate escape (CodeLoneSurrogate) or a repeated object key
// (CodeDuplicateKey). Syntax errors are left to encoding/json (nil is
// returned for them), so the caller's own decode reports them as before.
// It allocates only for object keys and runs in one pass.
func CheckStrictJSON(data []byte) *StrictJSONError {
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return &StrictJSONError{Code: CodeInvalidUTF8, Path: "byte " + strconv.Itoa(off),
			Detail: "the document is not valid UTF-8; decoding would replace the bytes with U+FFFD and change the value"}
	}
	sc := strictScanner{data: data}
	sc.value("$")
	return sc.err
}

// strictScanner walks one JSON value. It stops at the first strictness
// violation (err) and gives up silently on a syntax error (bad), which the
// real decoder then reports.
type strictScanner struct {
	data []byte
	pos  int
	err  *StrictJSONError
	bad  bool
}

func (sc *strictScanner) stopped() bool { return sc.err != nil || sc.bad }

func (sc *strictScanner) skipSpace() {
	for sc.pos < len(sc.data) {
		switch sc.data[sc.pos] {
		case ' ', '\t', '\n', '\r':
			sc.pos++
		default:
			return
		}
	}
}

func (sc *strictScanner) value(path string) {
	sc.skipSpace()
	if sc.pos >= len(sc.data) {
		sc.bad = true
		return
	}
	switch sc.data[sc.pos] {
	case '{':
		sc.object(path)
	case '[':
		sc.array(path)
	case '"':
		sc.str(path)
	default:
		// A number or literal: skip to the next structural byte. Its
		// syntax is the real decoder's business.
		for sc.pos < len(sc.data) {
			switch sc.data[sc.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			sc.pos++
		}
	}
}

func (sc *strictScanner) object(path string) {
	sc.pos++ // {
	seen := map[string]bool{}
	for {
		sc.skipSpace()
		if sc.pos >= len(sc.data) {
			sc.bad = true
			return
		}
		if sc.data[sc.pos] == '}' {
			sc.pos++
			return
		}
		if sc.data[sc.pos] != '"' {
			sc.bad = true
			return
		}
		key := sc.str(path)
		if sc.stopped() {
			return
		}
		child := path + "." + key
		if seen[key] {
			sc.err = &StrictJSONError{Code: CodeDuplicateKey, Path: child,
				Detail: fmt.Sprintf("key %q appears more than once in one object; a reader would silently keep only the last value", key)}
			return
		}
		seen[key] = true
		sc.skipSpace()
		if sc.pos >= len(sc.data) || sc.data[sc.pos] != ':' {
			sc.bad = true
			return
		}
		sc.pos++
		sc.value(child)
		if sc.stopped() {
			return
		}
		sc.skipSpace()
		if sc.pos >= len(sc.data) {
			sc.bad = true
			return
		}
		switch sc.data[sc.pos] {
		case ',':
			sc.pos++
		case '}':
			sc.pos++
			return
		default:
			sc.bad = true
			return
		}
	}
}

func (sc *strictScanner) array(path string) {
	sc.pos++ // [
	for i := 0; ; i++ {
		sc.skipSpace()
		if sc.pos >= len(sc.data) {
			sc.bad = true
			return
		}
		if sc.data[sc.pos] == ']' {
			sc.pos++
			return
		}
		sc.value(path + "[" + strconv.Itoa(i) + "]")
		if sc.stopped() {
			return
		}
		sc.skipSpace()
		if sc.pos >= len(sc.data) {
			sc.bad = true
			return
		}
		switch sc.data[sc.pos] {
		case ',':
			sc.pos++
		case ']':
			sc.pos++
			return
		default:
			sc.bad = true
			return
		}
	}
}

// str scans a string starting at its opening quote and returns its decoded
// value when it is needed as a key (escapes resolved; only keys are
// materialized). It refuses lone surrogate escapes.
func (sc *strictScanner) str(path string) string {
	sc.pos++ // "
	var b strings.Builder
	start := sc.pos
	plain := true
	for sc.pos < len(sc.data) {
		c := sc.data[sc.pos]
		switch {
		case c == '"':
			var out string
			if plain {
				out = string(sc.data[start:sc.pos])
			} else {
				out = b.String()
			}
			sc.pos++
			return out
		case c == '\\':
			if plain {
				b.Write(sc.data[start:sc.pos])
				plain = false
			}
			if sc.pos+1 >= len(sc.data) {
				sc.bad = true
				return ""
			}
			e := sc.data[sc.pos+1]
			if e != 'u' {
				b.WriteByte(unescapeSimple(e))
				sc.pos += 2
				continue
			}
			r, ok := sc.hex4(sc.pos + 2)
			if !ok {
				sc.bad = true
				return ""
			}
			sc.pos += 6
			switch {
			case r >= 0xD800 && r <= 0xDBFF:
				lo, ok := rune(0), false
				if sc.pos+1 < len(sc.data) && sc.data[sc.pos] == '\\' && sc.data[sc.pos+1] == 'u' {
					lo, ok = sc.hex4(sc.pos + 2)
				}
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					sc.err = loneSurrogate(path, r)
					return ""
				}
				sc.pos += 6
				b.WriteRune(0x10000 + (r-0xD800)<<10 + (lo - 0xDC00))
			case r >= 0xDC00 && r <= 0xDFFF:
				sc.err = loneSurrogate(path, r)
				return ""
			default:
				b.WriteRune(r)
			}
		default:
			if !plain {
				b.WriteByte(c)
			}
			sc.pos++
		}
	}
	sc.bad = true
	return ""
}

func (sc *strictScanner) hex4(at int) (rune, bool) {
	if at+4 > len(sc.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(sc.data[at:at+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}

func unescapeSimple(e byte) byte {
	switch e {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return e // " \ / (and invalid escapes, which the real decoder refuses)
}

func loneSurrogate(path string, r rune) *StrictJSONError {
	return &StrictJSONError{Code: CodeLoneSurrogate, Path: path,
		Detail: fmt.Sprintf("the escape \\u%04x is a lone UTF-16 surrogate; decoding would replace it with U+FFFD and change the value", r)}
}
