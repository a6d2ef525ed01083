package prhead_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/prhead"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestBadInputsAreAllReportedBeforeAnyRequest: a pull request run with
// every input invalid gets all of them in one error, sends nothing and
// writes nothing.
func TestBadInputsAreAllReportedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{
		"GITHUB_EVENT_NAME":         "pull_request",
		"GITHUB_REPOSITORY":         "not a repository",
		"GITHUB_OUTPUT":             filepath.Join(dir, "output"),
		"GITHUB_STATE":              filepath.Join(dir, "state"),
		"GITHUB_STEP_SUMMARY":       filepath.Join(dir, "summary"),
		"INPUT_PULL-REQUEST-NUMBER": "05",
		"INPUT_EXPECTED_HEAD_SHA":   "xyz",
	}
	getenv := func(k string) string { return env[k] }
	var out actionio.SyncBuffer
	api := settingstest.NoRequests(t)
	err := prhead.Run(context.Background(), prhead.Deps{Getenv: getenv, Stdout: &out, Transport: api})
	var se *lockaction.SettingsError
	require.ErrorAs(t, err, &se)
	var got []string
	for _, p := range se.Problems {
		got = append(got, lockaction.ReasonCode(p))
	}
	assert.Equal(t, []string{"input-required", "input-pattern-mismatch", "input-pattern-mismatch", "input-pattern-mismatch"}, got)
	for _, name := range []string{"github-token", "pull-request-number", "expected-head-sha", "GITHUB_REPOSITORY"} {
		assert.Contains(t, err.Error(), name)
	}
	for _, f := range []string{"GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"} {
		_, serr := os.Stat(env[f])
		assert.True(t, errors.Is(serr, os.ErrNotExist), "%s written: %v", f, serr)
	}
}
