package markdown_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

func TestText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"acme/game:1:build:default":    "acme/game:1:build:default",
		"run completed (failure)":      "run completed (failure)",
		"in_progress":                  `in\_progress`,
		"[x](https://evil)":            `\[x\](https://evil)`,
		"<img src=x>":                  "&lt;img src=x&gt;",
		"@org/team":                    "&#64;org/team",
		"a|b":                          `a\|b`,
		"line\nbreak\r\u2028x":         "line break  x",
		"`code`":                       "\\`code\\`",
		"# heading":                    `\# heading`,
		"- item":                       `\- item`,
		"12. item":                     `12\. item`,
		"3) item":                      `3\) item`,
		"===":                          `\===`,
		"2026 was a year":              "2026 was a year",
		"~~gone~~ **bold** _it_ &amp;": `\~\~gone\~\~ \*\*bold\*\* \_it\_ &amp;amp;`,
	} {
		assert.Equal(t, want, markdown.Text(in), "%q", in)
	}
	long := strings.Repeat("a", markdown.MaxField+10)
	assert.Equal(t, strings.Repeat("a", markdown.MaxField)+"…", markdown.Text(long))
	assert.Equal(t, long, markdown.Message(long), "a message keeps its advice")
	assert.Equal(t, "—", markdown.Cell(""))
}

// TestCode: a reason code in a code span is shown as written (a backslash
// escape would be shown literally inside one), and nothing can close the
// span, split a table cell or start a new line.
func TestCode(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "`REAP_DEADLINE_ELAPSED`", markdown.Code("REAP_DEADLINE_ELAPSED"))
	assert.Equal(t, "`a'b\\|c d`", markdown.Code("a`b|c\nd"))
	assert.Equal(t, "", markdown.Code(""))
	assert.Equal(t, "—", markdown.CodeCell(""))
}

func TestLink(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ text, url, want string }{
		{"acme/game run 7", "https://github.com/acme/game/actions/runs/7", "[acme/game run 7](https://github.com/acme/game/actions/runs/7)"},
		{"run", "https://x.test/a b)(c|d<e>f\"g'h`i[j]k", "[run](https://x.test/a%20b%29%28c%7Cd%3Ce%3Ef%22g%27h%60i%5Bj%5Dk)"},
		{"run", "javascript:alert(1)", "run"},
		{"run", "https://user:pw@x.test/", "run"},
		{"run", "/relative", "run"},
		{"run", "https://x.test/\n# injected", "run"},
		{"a]b", "https://x.test/", `[a\]b](https://x.test/)`},
	} {
		assert.Equal(t, c.want, markdown.Link(c.text, c.url), "%q %q", c.text, c.url)
	}
}

// FuzzEscaping: whatever the input, the output is one line, opens no
// construct (no unescaped backtick, bracket, pipe, emphasis, angle bracket
// or @), and a link's target cannot end early.
func FuzzEscaping(f *testing.F) {
	for _, s := range []string{"", "a|b", "[x](y)", "`", "\\", "<script>", "@me", "\u2028", "1. x", "https://x.test/a b"} {
		f.Add(s, "https://github.com/acme/game/actions/runs/1")
		f.Add("run", s)
	}
	f.Fuzz(func(t *testing.T, s, u string) {
		for _, out := range []string{markdown.Text(s), markdown.Message(s), markdown.Cell(s)} {
			assert.NotContains(t, out, "\n")
			assert.NotContains(t, out, "\r")
			assert.True(t, utf8.ValidString(out) || !utf8.ValidString(s))
			for i := 0; i < len(out); i++ {
				switch out[i] {
				case '`', '[', ']', '|', '*', '_', '~', '<', '>', '@':
					assert.True(t, i > 0 && out[i-1] == '\\' && !escapedBackslash(out, i-1), "unescaped %q at %d in %q", out[i], i, out)
				}
			}
		}
		code := markdown.Code(s)
		assert.NotContains(t, code, "\n")
		if code != "" {
			assert.Equal(t, 2, strings.Count(code, "`"), "one span: %q", code)
		}
		link := markdown.Link("run", u)
		if strings.HasPrefix(link, "[run](") {
			target := strings.TrimSuffix(strings.TrimPrefix(link, "[run]("), ")")
			assert.NotContains(t, target, ")")
			assert.NotContains(t, target, " ")
			assert.NotContains(t, target, "|")
			assert.NotContains(t, target, "\n")
		}
	})
}

// escapedBackslash reports whether the backslash at i is itself escaped
// (preceded by an odd run of backslashes).
func escapedBackslash(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}
