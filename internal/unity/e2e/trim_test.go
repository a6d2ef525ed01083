package e2e_test

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unityArea are the directories of the Unity actions and their rules
// (relative to the repository root).
var unityArea = []string{
	"internal/unity",
	"internal/actions/classifychanges", "internal/actions/preflight", "internal/actions/returnlicense",
	"internal/actions/cleanupevidence", "internal/actions/cleanupgate", "internal/actions/validatelicense",
	"internal/actions/ensureeditor", "internal/actions/requirevalidation",
}

// goTrims are the calls that trim with Go's whitespace set
// (unicode.IsSpace: U+0085 trimmed, U+FEFF kept): strings.TrimSpace and
// the actionio readers built on it.
var goTrims = regexp.MustCompile(`strings\.TrimSpace\b|\ba\.(Input|Required|Pattern|Bool|Identifier|NoEdgeWhitespaceNoNewline)\(`)

// TestUnityActionsTrimAsJavaScriptDoes: the reference trims every Unity
// input with String.prototype.trim (unity-lifecycle-facts.md §7), so no
// non-test file of the Unity area trims with Go's set; they all go
// through internal/jsstr (one helper, one whitespace set).
func TestUnityActionsTrimAsJavaScriptDoes(t *testing.T) {
	t.Parallel()
	_, self, _, ok := runtime.Caller(0)
	require.True(t, ok)
	root := filepath.Join(filepath.Dir(self), "..", "..", "..")
	files := 0
	for _, dir := range unityArea {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			files++
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(b), "\n") {
				if goTrims.MatchString(line) && !strings.HasPrefix(strings.TrimLeft(line, "\t "), "//") {
					rel, _ := filepath.Rel(root, p)
					t.Errorf("%s:%d trims with Go's whitespace set; use jsstr.Trim: %s", rel, i+1, strings.TrimSpace(line))
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	assert.Greater(t, files, 40, "the Unity area was read")
}
