package recover_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	recoveraction "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestBadInputsAreAllReportedBeforeAnyRequest: a recovery with every
// proof, target and credential problem at once lists them all in one error,
// sends nothing and writes nothing.
func TestBadInputsAreAllReportedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{
		"GITHUB_ACTION_REPOSITORY":   "acme/build-lock",
		"GITHUB_REPOSITORY":          "acme/build-lock",
		"GITHUB_REPOSITORY_ID":       "42",
		"GITHUB_REPOSITORY_OWNER_ID": "7",
		"GITHUB_OUTPUT":              filepath.Join(dir, "output"),
		"GITHUB_STATE":               filepath.Join(dir, "state"),
		"GITHUB_STEP_SUMMARY":        filepath.Join(dir, "summary"),
		"INPUT_OPERATION":            "recover",
		"INPUT_RESOURCE-SAFE":        "false",
		"INPUT_STATE_BRANCH":         "HEAD",
		"INPUT_REQUEST-BUDGET":       "lots",
		lockaction.EnvAppID:          "0",
		lockaction.EnvAppPrivateKey:  "-----BEGIN KEY-----\nsecretline\n-----END KEY-----",
	}
	getenv := func(k string) string { return env[k] }
	var out actionio.SyncBuffer
	api := settingstest.NoRequests(t)
	err := recoveraction.Run(context.Background(), recoveraction.Deps{Getenv: getenv, Stdout: &out, Transport: api})
	var se *lockaction.SettingsError
	require.ErrorAs(t, err, &se)
	var got []string
	for _, p := range se.Problems {
		got = append(got, lockaction.ReasonCode(p))
	}
	assert.Equal(t, []string{"reservation-id-required", "resource-safe-required", "input-required", "state-branch-ambiguous", "app-id"}, got)
	for _, f := range []string{"GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"} {
		_, serr := os.Stat(env[f])
		assert.True(t, errors.Is(serr, os.ErrNotExist), "%s written: %v", f, serr)
	}
	assert.Contains(t, out.String(), "::add-mask::")
	assert.Contains(t, out.String(), "request-budget")
	assert.NotContains(t, err.Error(), "secretline")
}
