package reap_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestBadInputsAreAllReportedBeforeAnyRequest: a reap run with invalid
// target, caller, writer and reader credentials lists every problem in one
// error, sends nothing and writes nothing.
func TestBadInputsAreAllReportedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{
		"GITHUB_ACTION_REPOSITORY":   "acme/build-lock",
		"GITHUB_REPOSITORY":          "acme/build-lock",
		"GITHUB_REPOSITORY_ID":       "042",
		"GITHUB_REPOSITORY_OWNER_ID": "7",
		"GITHUB_API_URL":             "ftp://example.com",
		"GITHUB_OUTPUT":              filepath.Join(dir, "output"),
		"GITHUB_STATE":               filepath.Join(dir, "state"),
		"GITHUB_STEP_SUMMARY":        filepath.Join(dir, "summary"),
		"INPUT_LOCK-NAME":            "seats",
		"BUILD_LOCK_REQUEST_BUDGET":  "9",
		lockaction.EnvAppID:          "12",
		lockaction.EnvReaderAppID:    "reader",
		lockaction.EnvReaderAppKey:   "k",
	}
	getenv := func(k string) string { return env[k] }
	var out actionio.SyncBuffer
	api := settingstest.NoRequests(t)
	err := reap.Run(context.Background(), reap.Deps{Getenv: getenv, Stdout: &out, Transport: api})
	var se *lockaction.SettingsError
	require.ErrorAs(t, err, &se)
	var got []string
	for _, p := range se.Problems {
		got = append(got, lockaction.ReasonCode(p))
	}
	assert.Equal(t, []string{"runner-url", "caller-ids", "app-credentials", reap.RuleReaderCredentials}, got)
	assert.Equal(t, "runner-url", lockaction.ReasonCode(err))
	for _, f := range []string{"GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"} {
		_, serr := os.Stat(env[f])
		assert.True(t, errors.Is(serr, os.ErrNotExist), "%s written: %v", f, serr)
	}
	assert.Contains(t, out.String(), "BUILD_LOCK_REQUEST_BUDGET")
}
