package actioncontract_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// divergencesDoc is the list of deliberate differences from the reference.
const divergencesDoc = "docs/divergences.md"

var (
	backtickRE  = regexp.MustCompile("`([^`]+)`")
	testNameRE  = regexp.MustCompile(`^((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+)(?:/"([^"]+)")?$`)
	packageRE   = regexp.MustCompile(`^(?:internal|cmd|tools)/[A-Za-z0-9_/]+$`)
	anchorRefRE = regexp.MustCompile(`\]\(#([^)]+)\)`)
)

// TestDivergencesArePinned keeps docs/divergences.md honest: every entry
// (a ### heading) names the tests that pin it ("**Pinned by:**") or points
// to another entry ("See [...]"), every test it names exists in the package
// named before it (a subtest's quoted name appears in that package's tests),
// and every in-page link resolves to a heading.
func TestDivergencesArePinned(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, divergencesDoc))
	require.NoError(t, err)
	doc := string(data)

	sources := map[string]string{}
	testSource := func(pkg string) string {
		if src, ok := sources[pkg]; ok {
			return src
		}
		files, err := filepath.Glob(filepath.Join(repoRoot, pkg, "*_test.go"))
		require.NoError(t, err)
		var b strings.Builder
		for _, f := range files {
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			b.Write(src)
		}
		sources[pkg] = b.String()
		return sources[pkg]
	}
	checked := 0
	checkPinned := func(where, text string) {
		pkg := ""
		for _, m := range backtickRE.FindAllStringSubmatch(text, -1) {
			tok := m[1]
			if packageRE.MatchString(tok) {
				pkg = tok
				continue
			}
			tm := testNameRE.FindStringSubmatch(tok)
			if tm == nil {
				continue
			}
			if !assert.NotEmpty(t, pkg, "%s: %s is not preceded by its package", where, tok) {
				continue
			}
			src := testSource(pkg)
			if !assert.NotEmpty(t, src, "%s: package %s has no tests", where, pkg) {
				continue
			}
			assert.True(t, strings.Contains(src, "func "+tm[1]+"("), "%s: %s names %s, which %s does not define", divergencesDoc, where, tm[1], pkg)
			if tm[2] != "" {
				assert.True(t, strings.Contains(src, `"`+tm[2]+`"`), "%s: %s names subtest %q of %s, not found in %s", divergencesDoc, where, tm[2], tm[1], pkg)
			}
			checked++
		}
	}

	entries := 0
	for _, part := range strings.Split(doc, "\n### ")[1:] {
		heading, body, _ := strings.Cut(part, "\n")
		entries++
		_, pinned, ok := strings.Cut(body, "**Pinned by:**")
		if !ok {
			assert.Contains(t, body, "See [", "%s: entry %q has neither **Pinned by:** nor a See [...] reference", divergencesDoc, heading)
			continue
		}
		pinned, _, _ = strings.Cut(pinned, "\n## ")
		checkPinned(heading, pinned)
	}
	for _, line := range strings.Split(doc, "\n") {
		if cells := strings.Split(strings.Trim(line, "| "), " | "); strings.HasPrefix(line, "| ") && len(cells) == 2 {
			checkPinned("table row "+cells[0], cells[1])
		}
	}
	assert.Greater(t, entries, 40, "entries parsed")
	assert.Greater(t, checked, 80, "test names checked")

	slugs := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			slugs[githubSlug(strings.TrimLeft(h, "# "))] = true
		}
	}
	for _, m := range anchorRefRE.FindAllStringSubmatch(doc, -1) {
		assert.True(t, slugs[m[1]], "%s links to #%s, which no heading defines", divergencesDoc, m[1])
	}
}

// githubSlug is the anchor GitHub derives from a heading: lower case,
// punctuation dropped, spaces as hyphens.
func githubSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}
