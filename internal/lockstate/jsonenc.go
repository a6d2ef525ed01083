package lockstate

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is a tiny ordered JSON writer that reproduces JavaScript
// JSON.stringify byte for byte: explicit key order, two-space indentation
// (or compact), "[]" for empty arrays, and JS string escaping, which unlike
// encoding/json leaves <, >, & and U+2028/U+2029 raw.

// jsonNode is a value in the ordered document tree.
type jsonNode interface{ isNode() }

type (
	jsonObject []jsonMember
	jsonArray  []jsonNode
	jsonString string
	jsonInt    int64
	jsonNull   struct{}
)

// jsonMember is one key/value pair of a jsonObject, in write order.
type jsonMember struct {
	Key   string
	Value jsonNode
}

func (jsonObject) isNode() {}
func (jsonArray) isNode()  {}
func (jsonString) isNode() {}
func (jsonInt) isNode()    {}
func (jsonNull) isNode()   {}

// stringifyIndent renders n like JSON.stringify(n, null, 2).
func stringifyIndent(n jsonNode) string {
	var b strings.Builder
	writeNode(&b, n, "  ", "")
	return b.String()
}

// stringifyCompact renders n like JSON.stringify(n).
func stringifyCompact(n jsonNode) string {
	var b strings.Builder
	writeNode(&b, n, "", "")
	return b.String()
}

func writeNode(b *strings.Builder, n jsonNode, indent, prefix string) {
	switch v := n.(type) {
	case jsonNull:
		b.WriteString("null")
	case jsonInt:
		b.WriteString(strconv.FormatInt(int64(v), 10))
	case jsonString:
		writeJSString(b, string(v))
	case jsonArray:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		inner := prefix + indent
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if indent != "" {
				b.WriteByte('\n')
				b.WriteString(inner)
			}
			writeNode(b, e, indent, inner)
		}
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(prefix)
		}
		b.WriteByte(']')
	case jsonObject:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		inner := prefix + indent
		b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if indent != "" {
				b.WriteByte('\n')
				b.WriteString(inner)
			}
			writeJSString(b, m.Key)
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			writeNode(b, m.Value, indent, inner)
		}
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(prefix)
		}
		b.WriteByte('}')
	}
}

const hexDigits = "0123456789abcdef"

// writeJSString writes s quoted with JSON.stringify's QuoteJSONString rules.
// s must be valid UTF-8 (callers validate first).
func writeJSString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[r>>4])
				b.WriteByte(hexDigits[r&0xf])
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// validUTF8 reports whether every string is valid UTF-8. Go strings can
// carry bytes JSON cannot represent; Encode refuses them instead of
// silently substituting U+FFFD.
func validUTF8(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}
