// Package markdown is the one escaping path for untrusted text written as
// GitHub-flavored Markdown: job summaries, issue bodies, status pages and
// reports. Every value that comes from a workflow, the lock state or the
// GitHub API is rendered through it, so a holder id, a run URL or a reason
// cannot start a heading, a link, a mention, an HTML tag or a new table row.
//
// Every function keeps its output on one line: control characters and
// U+2028/U+2029 become spaces. Field values are bounded at MaxField runes
// and messages at MaxMessage runes (then "…").
package markdown

import (
	"net/url"
	"strings"
)

const (
	// MaxField bounds one rendered field value (an id, a name, a URL).
	MaxField = 200
	// MaxMessage bounds one rendered message (an error an operator acts on).
	MaxMessage = 4000
)

// Text makes untrusted text inert: HTML special characters as entities,
// the Markdown punctuation that opens a construct backslash-escaped, @ as
// an entity (no mentions), and a first character that would start a block
// at the beginning of a line (#, +, -, =, a number followed by . or ))
// escaped too; bounded at MaxField runes.
func Text(s string) string { return lineStart(escape(s, MaxField, text)) }

// Message is Text bounded at MaxMessage runes, for a whole error message.
func Message(s string) string { return lineStart(escape(s, MaxMessage, text)) }

// lineStart escapes what would make an escaped line a heading, a list
// item, a thematic break or a setext underline.
func lineStart(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '#', '+', '-', '=':
		return "\\" + s
	}
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return s[:i] + "\\" + s[i:]
	}
	return s
}

// Cell is Text for a table cell, "—" for an empty value.
func Cell(s string) string {
	if s == "" {
		return "—"
	}
	return Text(s)
}

// Code renders s as one inline code span ("" for an empty s). Backslash
// escapes are not processed inside a code span, so the text is kept as
// written: a backtick becomes ', a | is escaped (GitHub splits table cells
// on it even inside code), and the length is bounded at MaxField runes.
func Code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + escape(s, MaxField, code) + "`"
}

// CodeCell is Code for a table cell, "—" for an empty value.
func CodeCell(s string) string {
	if s == "" {
		return "—"
	}
	return Code(s)
}

// Link renders text linked to rawURL when rawURL is an absolute http(s) URL
// with a host and no user information; otherwise the text alone. The URL
// is re-encoded so that no space, parenthesis, bracket, pipe, angle bracket
// or quote can end the link or the table cell early.
func Link(text, rawURL string) string {
	u := HTTPURL(rawURL)
	if u == "" {
		return Text(text)
	}
	return "[" + Text(text) + "](" + linkEscaper.Replace(u) + ")"
}

// HTTPURL returns rawURL normalized when it is an absolute http(s) URL
// with a host and no user information, else "".
func HTTPURL(rawURL string) string {
	if strings.ContainsFunc(rawURL, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' }) {
		return ""
	}
	p, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.User != nil {
		return ""
	}
	return p.String()
}

var linkEscaper = strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "|", "%7C", "<", "%3C", ">", "%3E",
	"[", "%5B", "]", "%5D", `"`, "%22", "'", "%27", "`", "%60", "\\", "%5C")

// text escapes what can open a construct anywhere in a line: code spans,
// emphasis, strikethrough, links and images (brackets; a parenthesis or !
// means nothing without them), HTML, entities, mentions and table cells.
func text(b *strings.Builder, r rune) {
	switch {
	case r == '&':
		b.WriteString("&amp;")
	case r == '<':
		b.WriteString("&lt;")
	case r == '>':
		b.WriteString("&gt;")
	case r == '@':
		b.WriteString("&#64;")
	case strings.ContainsRune("\\`*_[]|~", r):
		b.WriteByte('\\')
		b.WriteRune(r)
	default:
		b.WriteRune(r)
	}
}

func code(b *strings.Builder, r rune) {
	switch r {
	case '`':
		b.WriteByte('\'')
	case '|':
		b.WriteString("\\|")
	default:
		b.WriteRune(r)
	}
}

// escape writes at most limit runes of s (then "…"), turning control
// characters and U+2028/U+2029 into spaces and every other rune into what
// esc writes for it.
func escape(s string, limit int, esc func(b *strings.Builder, r rune)) string {
	var b strings.Builder
	count := 0
	for _, r := range s {
		if count == limit {
			b.WriteString("…")
			break
		}
		count++
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			b.WriteByte(' ')
			continue
		}
		esc(&b, r)
	}
	return b.String()
}
