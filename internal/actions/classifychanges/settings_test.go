package classifychanges_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/classifychanges"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestEveryBadSettingIsReportedInOneRun: GITHUB_OUTPUT unset, an
// over-long independent-paths declaration and two malformed SHAs of a
// pull request are reported together; nothing is written.
func TestEveryBadSettingIsReportedInOneRun(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"INPUT_EVENT_NAME": "pull_request", "INPUT_BASE_SHA": "abc", "INPUT_HEAD_SHA": strings.Repeat("g", 40),
		"INPUT_INDEPENDENT_PATHS": strings.Repeat("docs/\n", 100000),
	}
	files := settingstest.Files(t, env)
	delete(env, "GITHUB_OUTPUT")
	var out bytes.Buffer
	err := classifychanges.Run(context.Background(), classifychanges.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &out,
		Transport: settingstest.NoRequests(t)})
	e, codes := settingstest.Problems(t, err)
	require.Len(t, e.Problems, 4, "%v", err)
	assert.Equal(t, classifychanges.CodeOutputFileMissing, codes[0])
	assert.NotEmpty(t, codes[1], "the declaration's own code")
	assert.Equal(t, []string{"input-pattern-mismatch", "input-pattern-mismatch"}, codes[2:])
	assert.Equal(t, classifychanges.CodeOutputFileMissing, lockaction.ReasonCode(err))
	assert.Empty(t, settingstest.Written(t, files...))
	assert.Empty(t, out.String())

	// With GITHUB_OUTPUT set, only the fail-closed unity-required=true is
	// written before the refusal.
	files = settingstest.Files(t, env)
	err = classifychanges.Run(context.Background(), classifychanges.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &out,
		Transport: settingstest.NoRequests(t)})
	e, _ = settingstest.Problems(t, err)
	assert.Len(t, e.Problems, 3)
	assert.Contains(t, err.Error(), "unity-required stays true")
	outputs, err := actionio.ReadFileCommands(env["GITHUB_OUTPUT"])
	require.NoError(t, err)
	assert.Equal(t, map[string]string{classifychanges.OutputUnityRequired: "true"}, outputs)
	assert.Len(t, settingstest.Written(t, files...), 1, "the summary stays empty")
}
