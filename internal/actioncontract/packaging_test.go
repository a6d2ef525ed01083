package actioncontract_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
)

var distCmdsRE = regexp.MustCompile(`(?m)^DIST_CMDS \?= (.+)$`)

// TestEveryActionBinaryIsReleased: `make dist` (and so the release
// workflow, which runs it) builds every binary an action.yml launches, and
// each of them exists as cmd/<binary>.
func TestEveryActionBinaryIsReleased(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	require.NoError(t, err)
	m := distCmdsRE.FindSubmatch(raw)
	require.NotNil(t, m, "Makefile has no DIST_CMDS ?= line")
	dist := map[string]bool{}
	for _, c := range strings.Fields(string(m[1])) {
		dist[c] = true
	}
	for dir, a := range actioncontract.Registry {
		assert.True(t, dist[a.Binary], "%s runs %s, which DIST_CMDS does not release", dir, a.Binary)
		_, err := os.Stat(filepath.Join(repoRoot, "cmd", a.Binary, "main.go"))
		assert.NoError(t, err, "%s runs cmd/%s", dir, a.Binary)
	}
	release, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "release.yml"))
	require.NoError(t, err)
	assert.Contains(t, string(release), "make dist", "the release workflow builds through make dist (DIST_CMDS)")
}
