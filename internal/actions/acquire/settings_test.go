package acquire_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestBadInputsAreAllReportedBeforeAnyRequest: several invalid inputs at
// once are all listed in one error, whose reason code is the first
// problem's; no request is sent and GITHUB_STATE is not written (the post
// step is not registered). The output set is acquire's failure set
// (acquired=false with the first code), as every failed acquire writes it.
func TestBadInputsAreAllReportedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{
		"BUILD_LOCK_MODE":                        acquire.ModeAcquireWithCleanup,
		"GITHUB_ACTION_REPOSITORY":               "acme/build-lock",
		"GITHUB_REPOSITORY":                      "acme/game",
		"GITHUB_REPOSITORY_ID":                   "42",
		"GITHUB_REPOSITORY_OWNER_ID":             "x7",
		"GITHUB_OUTPUT":                          filepath.Join(dir, "output"),
		"GITHUB_STATE":                           filepath.Join(dir, "state"),
		"RUNNER_TEMP":                            filepath.Join(dir, "tmp"),
		"INPUT_LOCK-NAME":                        "a..b",
		"INPUT_TIMEOUT_MINUTES":                  "0",
		"INPUT_POLL-SECONDS":                     "soon",
		"INPUT_REQUIRE-RESOURCE-LIFECYCLE":       "maybe",
		"INPUT_MINIMUM_RELEASE_COOLDOWN_SECONDS": "-1",
		"INPUT_HOLDER-ID-SUFFIX":                 " padded",
		lockaction.EnvAppID:                      "12",
		"BUILD_LOCK_AUTH_GRACE_MS":               "later",
		"INPUT_PULL_REQUEST_NUMBER":              "not-a-number",
		"INPUT_GITHUB-TOKEN":                     "ghs_secret",
		"INPUT_EXPECTED-HEAD-SHA":                strings.Repeat("a", 40),
		"INPUT_LEASE-MINUTES":                    "240",
		"INPUT_STATE-BRANCH":                     "refs/heads/main",
		"INPUT_RUNNER-ID":                        "runner-1",
		"INPUT_MACHINE_SLOTS":                    "65",
	}
	getenv := func(k string) string { return env[k] }

	_, err := acquire.LoadSettings(getenv)
	var se *lockaction.SettingsError
	require.ErrorAs(t, err, &se)
	want := []string{
		"lock-name-pattern", "state-branch-ambiguous", "caller-ids", "input-edge-whitespace-or-newline",
		"input-invalid-positive-integer", "input-invalid-positive-integer", "input-invalid-boolean",
		"input-invalid-non-negative-integer", "input-invalid-positive-integer", "pr-head-check-failed", "app-credentials",
	}
	var got []string
	for _, p := range se.Problems {
		got = append(got, lockaction.ReasonCode(p))
	}
	assert.Equal(t, want, got)
	assert.Equal(t, "lock-name-pattern", lockaction.ReasonCode(err))
	assert.NotContains(t, err.Error(), "ghs_secret")

	var out actionio.SyncBuffer
	api := settingstest.NoRequests(t)
	err = acquire.Run(context.Background(), acquire.Deps{Getenv: getenv, Stdout: &out, Transport: api})
	require.ErrorAs(t, err, &se)
	assert.Len(t, se.Problems, len(want))
	_, serr := os.Stat(env["GITHUB_STATE"])
	assert.True(t, errors.Is(serr, os.ErrNotExist), "GITHUB_STATE written: %v", serr)
	outputs, rerr := actionio.ReadFileCommands(env["GITHUB_OUTPUT"])
	require.NoError(t, rerr)
	assert.Equal(t, "false", outputs["acquired"])
	assert.Equal(t, "lock-name-pattern", outputs["admission-result"])
	assert.Empty(t, outputs["holder-id"])
	assert.Contains(t, out.String(), "::add-mask::ghs_secret")
	assert.Contains(t, out.String(), "Ignoring invalid BUILD_LOCK_AUTH_GRACE_MS")
}

// TestJobCheckRunIDInput: the job-check-run-id input (default
// ${{ job.check_run_id }} in action.yml) is a job id or empty; anything else
// is refused before any request, naming the input and never echoing the
// value.
func TestJobCheckRunIDInput(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"GITHUB_ACTION_REPOSITORY":   "acme/build-lock",
		"GITHUB_REPOSITORY":          "acme/game",
		"GITHUB_REPOSITORY_ID":       "42",
		"GITHUB_REPOSITORY_OWNER_ID": "7",
		"GITHUB_RUN_ID":              "100",
		"GITHUB_RUN_ATTEMPT":         "1",
		"GITHUB_JOB":                 "build",
		"RUNNER_NAME":                "runner-1",
		"INPUT_LOCK_NAME":            "unity",
		lockaction.EnvAppID:          "12",
		lockaction.EnvAppPrivateKey:  "key",
	}
	load := func(v string) (acquire.Settings, error) {
		env := map[string]string{"INPUT_JOB_CHECK_RUN_ID": v}
		for k, x := range base {
			env[k] = x
		}
		return acquire.LoadSettings(func(k string) string { return env[k] })
	}
	for _, ok := range []struct{ in, want string }{{"", ""}, {"51725241954", "51725241954"}, {" 7 ", "7"}, {"9223372036854775807", "9223372036854775807"}} {
		s, err := load(ok.in)
		var se *lockaction.SettingsError
		if errors.As(err, &se) {
			for _, p := range se.Problems {
				assert.NotContains(t, p.Error(), acquire.InputJobCheckRunID, "%q", ok.in)
			}
		}
		assert.Equal(t, ok.want, s.JobCheckRunID, "%q", ok.in)
	}
	for _, bad := range []string{"0", "0123", "-5", "12a", "1.5", "9223372036854775808", "99999999999999999999"} {
		_, err := load(bad)
		require.Error(t, err, "%q", bad)
		var se *lockaction.SettingsError
		require.ErrorAs(t, err, &se)
		codes := map[string]string{}
		for _, p := range se.Problems {
			if strings.Contains(p.Error(), acquire.InputJobCheckRunID) {
				codes[acquire.InputJobCheckRunID] = lockaction.ReasonCode(p)
				assert.NotContains(t, p.Error(), strconv.Quote(bad), "the value is not echoed")
			}
		}
		assert.Equal(t, "input-pattern-mismatch", codes[acquire.InputJobCheckRunID], "%q", bad)
	}
}
