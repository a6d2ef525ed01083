package changes_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/changes"
)

func TestParseIndependentPathsAccepts(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		raw  string
		want []string
	}{
		"empty":                       {"", nil},
		"blank lines":                 {"\n  \n\t\n", nil},
		"one":                         {"docs/**", []string{"docs/"}},
		"nested and trimmed":          {"  docs/api/**  \n.config/tools/**", []string{"docs/api/", ".config/tools/"}},
		"CRLF":                        {"docs/**\r\nsite/**\r\n", []string{"docs/", "site/"}},
		"duplicates dropped":          {"docs/**\ndocs/**\n docs/** ", []string{"docs/"}},
		"dotted names are not dots":   {"..hidden/**\n.../**\na.b/**", []string{"..hidden/", ".../", "a.b/"}},
		"github but not workflows":    {".github/ISSUE_TEMPLATE/**\n.github/actions-docs/**", []string{".github/ISSUE_TEMPLATE/", ".github/actions-docs/"}},
		"case differs from Assets":    {"assets/**\nAssetsDocs/**", []string{"assets/", "AssetsDocs/"}},
		"workflows lookalike sibling": {".github/workflows-docs/**", []string{".github/workflows-docs/"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := changes.ParseIndependentPaths(tc.raw)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseIndependentPathsRefuses(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		raw  string
		code string
		line int
	}{
		"no glob":                   {"docs", changes.CodeDeclarationPattern, 1},
		"single star":               {"docs/*", changes.CodeDeclarationPattern, 1},
		"file glob":                 {"docs/**/*.md", changes.CodeDeclarationPattern, 1},
		"bare glob":                 {"**", changes.CodeDeclarationPattern, 1},
		"absolute":                  {"/docs/**", changes.CodeDeclarationPattern, 1},
		"double slash":              {"docs//**", changes.CodeDeclarationPattern, 1},
		"backslash":                 {`docs\**`, changes.CodeDeclarationPattern, 1},
		"space inside":              {"my docs/**", changes.CodeDeclarationPattern, 1},
		"negation":                  {"!docs/**", changes.CodeDeclarationPattern, 1},
		"names the right line":      {"docs/**\n\nsite/*", changes.CodeDeclarationPattern, 3},
		"dot segment":               {"./docs/**", changes.CodeDeclarationDotSegment, 1},
		"dot-dot segment":           {"docs/../Assets/**", changes.CodeDeclarationDotSegment, 1},
		"trailing dot-dot":          {"docs/../**", changes.CodeDeclarationDotSegment, 1},
		"Assets":                    {"Assets/**", changes.CodeDeclarationOverlap, 1},
		"inside Assets":             {"Assets/Docs/**", changes.CodeDeclarationOverlap, 1},
		"Packages":                  {"Packages/**", changes.CodeDeclarationOverlap, 1},
		"ProjectSettings":           {"ProjectSettings/**", changes.CodeDeclarationOverlap, 1},
		"workflows":                 {".github/workflows/**", changes.CodeDeclarationOverlap, 1},
		"github contains workflows": {"docs/**\n.github/**", changes.CodeDeclarationOverlap, 2},
		"too large":                 {strings.Repeat("a", changes.MaxDeclarationBytes+1), changes.CodeDeclarationTooLarge, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := changes.ParseIndependentPaths(tc.raw)
			var de *changes.DeclarationError
			require.True(t, errors.As(err, &de), "%v", err)
			assert.Equal(t, tc.code, de.Code)
			assert.Equal(t, tc.line, de.Line)
			if tc.line > 0 {
				assert.Contains(t, err.Error(), "line")
			}
		})
	}
}

func TestParseIndependentPathsBoundsEntries(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range changes.MaxDeclaredPaths + 1 {
		b.WriteString("d")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(string(rune('a' + i/26)))
		b.WriteString("/**\n")
	}
	_, err := changes.ParseIndependentPaths(b.String())
	var de *changes.DeclarationError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, changes.CodeDeclarationTooMany, de.Code)
}

func TestDeclarationErrorQuotesHostileEntries(t *testing.T) {
	t.Parallel()
	_, err := changes.ParseIndependentPaths("::error::owned\r")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\r")
	_, err = changes.ParseIndependentPaths("x\x00y/**")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\x00")
	assert.Contains(t, err.Error(), `\x00`)
}

// FuzzParseIndependentPaths: any declaration is either refused with a
// typed error naming a line that exists, or yields distinct prefixes that
// match the grammar, hold no dot segment, overlap no protected directory
// either way, and never make a protected path independent.
func FuzzParseIndependentPaths(f *testing.F) {
	for _, seed := range []string{
		"docs/**", "docs/**\r\nsite/**\r\n", "\n\n docs/** \n", ".github/**", ".github/workflows/**",
		"Assets/**", "assets/**", "Assets/x/**", "ProjectSettings/**", "Packages/**", "./docs/**", "docs/../**",
		"../**", "..docs/**", "docs/*", "docs/**/*", "**", "/docs/**", "docs//**", "d o c s/**", "docs/**\x00",
		"docs/**\nAssets/**", "a/b/c/d/e/**", "\xff/**", ".github/workflows-x/**", "Assets",
	} {
		f.Add(seed)
	}
	protectedPaths := []string{"Assets/Scenes/Main.unity", "Packages/manifest.json", "ProjectSettings/ProjectVersion.txt", ".github/workflows/unity.yml"}
	f.Fuzz(func(t *testing.T, raw string) {
		prefixes, err := changes.ParseIndependentPaths(raw)
		if err != nil {
			var de *changes.DeclarationError
			if !errors.As(err, &de) || de.Code == "" {
				t.Fatalf("untyped error %v", err)
			}
			if de.Line > strings.Count(raw, "\n")+1 {
				t.Fatalf("line %d does not exist", de.Line)
			}
			if strings.ContainsAny(err.Error(), "\r\n\x00") {
				t.Fatalf("error breaks the log line: %q", err.Error())
			}
			return
		}
		seen := map[string]bool{}
		for _, p := range prefixes {
			if seen[p] || !strings.HasSuffix(p, "/") || strings.Contains(p, "//") || strings.HasPrefix(p, "/") {
				t.Fatalf("bad prefix %q", p)
			}
			seen[p] = true
			for _, seg := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
				if seg == "." || seg == ".." || seg == "" {
					t.Fatalf("dot or empty segment in %q", p)
				}
			}
		}
		for _, pp := range protectedPaths {
			if changes.Independent(pp, prefixes) {
				t.Fatalf("%s became independent through %v", pp, prefixes)
			}
		}
	})
}
