package changes_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/changes"
)

func TestIndependent(t *testing.T) {
	t.Parallel()
	declared := []string{"docs/", "tools/site/"}
	cases := map[string]bool{
		"README.md":                          true,
		"CHANGELOG.md":                       true,
		".hidden.md":                         true,
		".md":                                false,
		"README.MD":                          false, // case-sensitive, as git paths are
		"README.md.meta":                     false,
		"docs/README.md":                     true, // declared prefix
		"sub/README.md":                      false,
		".cursorrules":                       true,
		".cursorrules2":                      false,
		".github/copilot-instructions.md":    true,
		".github/dependency-ownership.md":    true,
		".github/CODEOWNERS":                 false,
		".github/ISSUE_TEMPLATE/bug.yml":     true,
		".github/issue_template/bug.yml":     false,
		".github/workflows/unity.yml":        false,
		".llm/notes.txt":                     true,
		"progress/2026-01.txt":               true,
		"progressive/x":                      false,
		"docs/a b\nc.txt":                    true,
		"docsx/a":                            false,
		"tools/site/index.html":              true,
		"tools/build.sh":                     false,
		"Assets/Scenes/Main.unity":           false,
		"Packages/manifest.json":             false,
		"ProjectSettings/ProjectVersion.txt": false,
		"LICENSE":                            false,
	}
	for path, want := range cases {
		assert.Equal(t, want, changes.Independent(path, declared), "%q", path)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	declared := []string{"docs/"}
	cases := map[string]struct {
		paths    []string
		required bool
		reason   string
		forcedBy string
	}{
		"empty diff":         {nil, true, changes.ReasonEmptyDiff, ""},
		"docs only":          {[]string{"README.md", "docs/guide.md", ".github/ISSUE_TEMPLATE/x.yml"}, false, changes.ReasonIndependent, ""},
		"one Assets change":  {[]string{"README.md", "Assets/Player.cs", "Packages/manifest.json"}, true, changes.ReasonUnityPath, "Assets/Player.cs"},
		"first path decides": {[]string{"src/x.cs", "Assets/y.cs"}, true, changes.ReasonUnityPath, "src/x.cs"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := changes.Classify(tc.paths, declared)
			assert.Equal(t, tc.required, d.UnityRequired)
			assert.Equal(t, tc.reason, d.Reason)
			assert.Equal(t, tc.forcedBy, d.ForcedBy)
			assert.Equal(t, len(tc.paths), d.Paths)
		})
	}
	n := changes.NotPullRequest()
	assert.True(t, n.UnityRequired)
	assert.Equal(t, changes.ReasonNotPullRequest, n.Reason)
}

func TestParseNULPaths(t *testing.T) {
	t.Parallel()
	got, err := changes.ParseNULPaths(nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = changes.ParseNULPaths([]byte("a.md\x00dir/with space\x00new\nline.md\x00"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a.md", "dir/with space", "new\nline.md"}, got)
	for _, bad := range []string{"a.md", "a.md\x00\x00", "\x00", "a\x00b"} {
		_, err := changes.ParseNULPaths([]byte(bad))
		assert.ErrorIs(t, err, changes.ErrMalformedPathList, "%q", bad)
	}
}

func TestDisplayPath(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "Assets/My Scene.unity", changes.DisplayPath("Assets/My Scene.unity"))
	assert.Equal(t, `"Assets/new\nline.cs"`, changes.DisplayPath("Assets/new\nline.cs"))
	assert.Equal(t, `"::error::x\r"`, changes.DisplayPath("::error::x\r"))
	assert.Equal(t, `"Assets/\xff.cs"`, changes.DisplayPath("Assets/\xff.cs"))
	assert.Equal(t, `" lead"`, changes.DisplayPath(" lead"))
}
