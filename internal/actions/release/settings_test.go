package release_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestBadInputsAreAllReportedBeforeAnyRequest: several invalid inputs at
// once are all listed in one error, whose reason code is the first
// problem's; no request is sent and nothing is written to GITHUB_OUTPUT,
// GITHUB_STATE or the job summary.
func TestBadInputsAreAllReportedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{
		"GITHUB_ACTION_REPOSITORY":   "acme/build-lock",
		"GITHUB_REPOSITORY":          "acme/game",
		"GITHUB_REPOSITORY_ID":       "42",
		"GITHUB_REPOSITORY_OWNER_ID": "7",
		"GITHUB_RUN_ID":              "9",
		"GITHUB_SERVER_URL":          "https://github.com/path",
		"GITHUB_OUTPUT":              filepath.Join(dir, "output"),
		"GITHUB_STATE":               filepath.Join(dir, "state"),
		"GITHUB_STEP_SUMMARY":        filepath.Join(dir, "summary"),
		"RUNNER_NAME":                "runner\x1b[31m",
		"INPUT_LOCK-NAME":            "policy",
		"INPUT_HOLDER_ID":            "other/repo:9:build:default",
		"INPUT_RESOURCE-SAFE":        "maybe",
		lockaction.EnvLegacyToken:    "ghp_legacy",
	}
	getenv := func(k string) string { return env[k] }

	_, err := release.LoadSettings(getenv)
	var se *lockaction.SettingsError
	require.ErrorAs(t, err, &se)
	var got []string
	for _, p := range se.Problems {
		got = append(got, lockaction.ReasonCode(p))
	}
	assert.Equal(t, []string{"lock-name-reserved", "runner-url", "runner-environment", "input-pattern-mismatch", "legacy-token"}, got)
	assert.Equal(t, "lock-name-reserved", lockaction.ReasonCode(err))

	var out actionio.SyncBuffer
	api := settingstest.NoRequests(t)
	err = release.Run(context.Background(), release.Deps{Getenv: getenv, Stdout: &out, Transport: api})
	require.ErrorAs(t, err, &se)
	assert.Len(t, se.Problems, len(got))
	for _, f := range []string{"GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"} {
		_, serr := os.Stat(env[f])
		assert.True(t, errors.Is(serr, os.ErrNotExist), "%s written: %v", f, serr)
	}
	assert.Contains(t, out.String(), "::add-mask::ghp_legacy")
	assert.NotContains(t, err.Error(), "ghp_legacy")
}
