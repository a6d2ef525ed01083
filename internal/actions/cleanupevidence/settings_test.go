package cleanupevidence_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/cleanupevidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestEveryBadSettingIsReportedInOneRun: with GITHUB_OUTPUT unset, two
// non-boolean flags, a malformed digest, a relative RUNNER_TEMP and a bad
// run number, one run reports all six problems (the first one's code is
// the reason), sends nothing and writes nothing.
func TestEveryBadSettingIsReportedInOneRun(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"INPUT_RETURN_LOG_PATH": "/tmp/x/unity-return.log", "INPUT_RETURN_COMMAND_COMPLETED": "yes",
		"INPUT_EVIDENCE_CAPTURE_COMPLETE": "maybe", "INPUT_RETURN_LOG_DIGEST": "xyz",
		"RUNNER_TEMP": "relative/temp", "GITHUB_RUN_ID": "0", "GITHUB_RUN_ATTEMPT": "1",
	}
	files := settingstest.Files(t, env)
	delete(env, "GITHUB_OUTPUT")
	var out bytes.Buffer
	err := cleanupevidence.Run(context.Background(), cleanupevidence.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &out,
		Transport: settingstest.NoRequests(t)})
	e, codes := settingstest.Problems(t, err)
	assert.Equal(t, []string{cleanupevidence.CodeOutputFileMissing, "input-invalid-boolean", "input-invalid-boolean", "input-pattern-mismatch",
		cleanupevidence.CodeRunnerEnvironment, cleanupevidence.CodeRunnerEnvironment}, codes, "%v", err)
	assert.Len(t, e.Problems, 6)
	assert.Equal(t, cleanupevidence.CodeOutputFileMissing, lockaction.ReasonCode(err))
	assert.Empty(t, settingstest.Written(t, files...))
	assert.Empty(t, out.String())
}

// TestBadInputsStillWriteTheFailClosedVerdictOnly: with GITHUB_OUTPUT set,
// the default verdict is written first (as always), then every input
// problem is reported; no summary is written.
func TestBadInputsStillWriteTheFailClosedVerdictOnly(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"INPUT_RETURN_LOG_PATH": "/tmp/x/unity-return.log", "INPUT_RETURN_COMMAND_COMPLETED": "true",
		"INPUT_EVIDENCE_CAPTURE_COMPLETE": "true", "INPUT_RETURN_LOG_DIGEST": "",
		"RUNNER_TEMP": "/tmp", "GITHUB_RUN_ID": "1", "GITHUB_RUN_ATTEMPT": "1",
	}
	files := settingstest.Files(t, env)
	err := cleanupevidence.Run(context.Background(), cleanupevidence.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &bytes.Buffer{},
		Transport: settingstest.NoRequests(t)})
	_, codes := settingstest.Problems(t, err)
	assert.Equal(t, []string{"input-required", "input-pattern-mismatch"}, codes, "%v", err)
	written := settingstest.Written(t, files...)
	require.Contains(t, written, env["GITHUB_OUTPUT"])
	assert.Contains(t, written[env["GITHUB_OUTPUT"]], "classification-complete")
	assert.NotContains(t, written, env["GITHUB_STEP_SUMMARY"])
}
