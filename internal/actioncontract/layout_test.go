package actioncontract_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeLayoutListsEveryDirectory: README.md's "Layout" block names
// every directory of the repository (testdata, build output, installed
// tools in .cache, node_modules and .git aside). A directory is named by its own path, or covered by an
// entry "P/..." or "P/<name>" for everything under P.
func TestReadmeLayoutListsEveryDirectory(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "## Layout\n")
	require.True(t, ok, "README.md has no ## Layout section")
	section, _, _ = strings.Cut(section, "\n## ")
	_, after, ok := strings.Cut(section, "```\n")
	require.True(t, ok, "README.md's ## Layout section has no code block")
	block, _, ok := strings.Cut(after, "```")
	require.True(t, ok)

	var covers []string
	for _, m := range regexp.MustCompile(`([A-Za-z0-9_./-]+)/(?:\.\.\.|<name>)`).FindAllStringSubmatch(block, -1) {
		covers = append(covers, m[1])
	}
	named := func(dir string) bool {
		if regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(dir) + `($|[\s,/])`).MatchString(block) {
			return true
		}
		for _, c := range covers {
			if strings.HasPrefix(dir, c+"/") {
				return true
			}
		}
		return false
	}
	// .cache holds tools make installs (make act) and _artifacts what go test
	// -artifacts keeps (make sim-ci), ignored by git like bin and dist.
	skip := map[string]bool{".git": true, "node_modules": true, "testdata": true, "bin": true, "dist": true, ".cache": true, "_artifacts": true}
	var missing []string
	err = filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == repoRoot {
			return err
		}
		rel := filepath.ToSlash(must(filepath.Rel(repoRoot, p)))
		if skip[d.Name()] && rel != ".github/dist" || strings.HasPrefix(d.Name(), "dist.") {
			return filepath.SkipDir
		}
		if !named(rel) {
			missing = append(missing, rel)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, missing, "directories missing from README.md's Layout section")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
