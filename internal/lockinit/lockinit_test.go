package lockinit_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockinit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// The written config decodes to RecommendedConfig without a single
// fallback warning, at every seat count, and asks for schema 6.
func TestConfigJSONDecodesExactly(t *testing.T) {
	for _, seats := range []int{1, 2, 17, lockstate.MaxHoldersCap} {
		cfg, warnings := lockstate.DecodeConfig(lockinit.ConfigJSON(seats))
		assert.Empty(t, warnings)
		assert.Equal(t, lockinit.RecommendedConfig(seats), cfg)
		assert.Equal(t, lockstate.FencedSchemaVersion, lockstate.TargetSchema(cfg))
	}
}

func TestOptionsValidateListsEveryProblem(t *testing.T) {
	err := lockinit.Options{Lock: "bad/name", Seats: 0, OwnerID: -1, Repository: "nope"}.Validate()
	require.Error(t, err)
	for _, want := range []string{"--lock", "--seats", "--owner-id", "--repository"} {
		assert.Contains(t, err.Error(), want)
	}
	for _, reserved := range []string{"policy", "x.config", "README"} {
		assert.Error(t, lockinit.Options{Lock: reserved, Seats: 1}.Validate(), reserved)
	}
	assert.NoError(t, lockinit.Options{Lock: "unity", Seats: 2, OwnerID: 7, Repository: "acme/build-lock"}.Validate())
}

// fakeRepo is a directory shaped like a fork of the build lock repository.
func fakeRepo(t *testing.T) string {
	dir := t.TempDir()
	for path, content := range map[string]string{
		lockinit.ReaperWorkflowPath:                     "jobs:\n  reap:\n    steps:\n      - uses: ./.github/actions/reap-stale-locks\n",
		lockinit.RecoverWorkflowPath:                    "jobs:\n  recover:\n    steps:\n      - uses: ./.github/actions/recover-build-lock\n",
		".github/actions/reap-stale-locks/action.yml":   "name: reap\n",
		".github/actions/recover-build-lock/action.yml": "name: recover\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

func TestApplyRefusesToOverwriteWithoutForce(t *testing.T) {
	dir := fakeRepo(t)
	o := lockinit.Options{Lock: "unity", Seats: 2, OwnerID: 42}
	files, err := lockinit.Plan(o)
	require.NoError(t, err)
	status, err := lockinit.Apply(dir, files, false)
	require.NoError(t, err)
	assert.Equal(t, []lockinit.Status{lockinit.Created, lockinit.Created}, status)
	got, err := os.ReadFile(filepath.Join(dir, "locks/unity.config.json"))
	require.NoError(t, err)
	assert.Equal(t, lockinit.ConfigJSON(2), got)
	policy, err := os.ReadFile(filepath.Join(dir, "locks/policy.json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"ownerId":42}`, string(policy))

	// Run again: unchanged.
	status, err = lockinit.Apply(dir, files, false)
	require.NoError(t, err)
	assert.Equal(t, []lockinit.Status{lockinit.Unchanged, lockinit.Unchanged}, status)

	// Three seats now: the config differs, so nothing is written without
	// --force (not even the unchanged policy).
	files3, err := lockinit.Plan(lockinit.Options{Lock: "unity", Seats: 3, OwnerID: 43})
	require.NoError(t, err)
	_, err = lockinit.Apply(dir, files3, false)
	require.ErrorIs(t, err, lockinit.ErrExists)
	assert.Contains(t, err.Error(), "locks/unity.config.json")
	assert.Contains(t, err.Error(), "locks/policy.json")
	got, _ = os.ReadFile(filepath.Join(dir, "locks/unity.config.json"))
	assert.Equal(t, lockinit.ConfigJSON(2), got, "nothing was written")
	status, err = lockinit.Apply(dir, files3, true)
	require.NoError(t, err)
	assert.Equal(t, []lockinit.Status{lockinit.Overwritten, lockinit.Overwritten}, status)
}

func TestCheckWorkflows(t *testing.T) {
	require.NoError(t, lockinit.CheckWorkflows(fakeRepo(t)))
	err := lockinit.CheckWorkflows(t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fork or mirror")
	// The real repository passes.
	require.NoError(t, lockinit.CheckWorkflows(filepath.Join("..", "..")))
	dir := fakeRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, lockinit.ReaperWorkflowPath), []byte("jobs: {}\n"), 0o644))
	err = lockinit.CheckWorkflows(dir)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "does not run ./.github/actions/reap-stale-locks"))
	assert.False(t, errors.Is(err, lockinit.ErrExists))
}

func TestNextStepsNameEveryManualStep(t *testing.T) {
	text := lockinit.NextSteps(lockinit.Options{Lock: "unity", Seats: 2, Repository: "acme/build-lock"}, []string{"locks/unity.config.json"})
	for _, want := range []string{
		"git add locks/unity.config.json",
		"https://github.com/organizations/acme/settings/apps/new",
		"Contents: Read and write",
		"Self-hosted runners: Read",
		"gh secret set BUILD_LOCK_APP_PRIVATE_KEY --org acme",
		"gh secret set BUILD_LOCK_READER_APP_ID",
		"gh variable set BUILD_LOCK_NAME --body unity -R acme/build-lock",
		"gh api repos/acme/build-lock/rulesets --method POST",
		`"refs/heads/lock-state"`,
		"buildlock doctor --lock-repository acme/build-lock --lock unity",
		"lock-name: unity",
	} {
		assert.Contains(t, text, want)
	}
}
