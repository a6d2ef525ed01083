package jsstr_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
)

// nodeGolden is testdata/node.json, written once by Node.js (v20, ICU
// Unicode 17) so the tests need no JavaScript engine:
//
//	toLowerCase: 4000 pseudo-random strings over letters, sigmas, İ,
//	  case-ignorable marks and spaces, with String.prototype.toLowerCase;
//	trimmed: every code point c for which ("a"+c).trim() differs from
//	  "a"+c, i.e. the set String.prototype.trim removes.
type nodeGolden struct {
	Node        string      `json:"node"`
	ToLowerCase [][2]string `json:"toLowerCase"`
	Trimmed     []rune      `json:"trimmed"`
}

func golden(t *testing.T) nodeGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/node.json")
	require.NoError(t, err)
	var g nodeGolden
	require.NoError(t, json.Unmarshal(b, &g))
	return g
}

func TestIsSpaceIsExactlyTheSetJavaScriptTrims(t *testing.T) {
	t.Parallel()
	want := map[rune]bool{}
	for _, r := range golden(t).Trimmed {
		want[r] = true
	}
	require.Len(t, want, 25)
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		if jsstr.IsSpace(r) != want[r] {
			t.Errorf("IsSpace(%U) = %v, Node.js trims it: %v", r, jsstr.IsSpace(r), want[r])
		}
	}
}

func TestTrimDiffersFromTrimSpaceWhereJavaScriptDoes(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"\ufefftrue\ufeff", "true"},             // ZWNBSP (a BOM) is trimmed by JavaScript, kept by TrimSpace
		{"\u0085true\u0085", "\u0085true\u0085"}, // NEL is kept by JavaScript, trimmed by TrimSpace
		{" \t\r\n\v\f\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000x\u3000", "x"},
		{"\u180ex\u180e", "\u180ex\u180e"}, // Mongolian vowel separator: not whitespace since ES2016
		{"\u200bx", "\u200bx"},             // zero-width space is not whitespace
		{"a b", "a b"},
		{"", ""},
		{"   ", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, jsstr.Trim(tt.in), "%q", tt.in)
		assert.Equal(t, tt.in != tt.want, jsstr.HasEdgeSpace(tt.in), "%q", tt.in)
	}
}

func TestToLowerMatchesNodeJS(t *testing.T) {
	t.Parallel()
	g := golden(t)
	require.NotEmpty(t, g.ToLowerCase)
	special := 0
	for _, c := range g.ToLowerCase {
		assert.Equal(t, c[1], jsstr.ToLower(c[0]), "toLowerCase(%q) in Node.js %s", c[0], g.Node)
		if strings.ToLower(c[0]) != c[1] {
			special++
		}
	}
	assert.Greater(t, special, 300, "the golden exercises the cases strings.ToLower gets wrong")
}

// TestToLowerEqualsStringsToLowerForEveryOtherCodePoint: one code point at
// a time, only İ differs from Go's simple mapping (a lone Σ has no cased
// letter before it, so it is not final).
func TestToLowerEqualsStringsToLowerForEveryOtherCodePoint(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := string(r)
		want := strings.ToLower(s)
		if r == 'İ' {
			want = "i\u0307"
		}
		if got := jsstr.ToLower(s); got != want {
			t.Errorf("ToLower(%U) = %q, want %q", r, got, want)
		}
	}
}

func TestToLowerProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		got := jsstr.ToLower(s)
		if !strings.ContainsAny(s, "İΣ") {
			assert.Equal(t, strings.ToLower(s), got, "only İ and Σ differ from strings.ToLower")
		}
		assert.Equal(t, got, jsstr.ToLower(got), "lowercasing is idempotent")
		assert.Equal(t, jsstr.Trim(jsstr.Trim(s)), jsstr.Trim(s), "trimming is idempotent")
		assert.False(t, jsstr.HasEdgeSpace(jsstr.Trim(s)))
	})
}

func FuzzToLowerAndTrim(f *testing.F) {
	for _, s := range []string{"ΑΣ", "İ", "ΑΣ'", "Σ.Α", "\xff\xfeΣ", "\ufeff x \u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := jsstr.ToLower(s)
		if utf8.ValidString(s) && !utf8.ValidString(l) {
			t.Fatalf("ToLower(%q) = %q is not valid UTF-8", s, l)
		}
		tr := jsstr.Trim(s)
		if !strings.Contains(s, tr) || jsstr.HasEdgeSpace(tr) {
			t.Fatalf("Trim(%q) = %q", s, tr)
		}
	})
}
